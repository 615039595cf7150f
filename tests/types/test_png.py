"""The PNG writer: lossless through an independent decoder (Pillow), valid chunks, bad input refused."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image as PILImage

from eviseek.types import Image
from eviseek.types.png import PNG_SIGNATURE, encode_png


def _decoded(data: bytes) -> np.ndarray:
    with PILImage.open(io.BytesIO(data), formats=["PNG"]) as pil:
        pil.load()  # Pillow checks every chunk's CRC while it reads
        assert pil.mode == "RGB"
        return np.asarray(pil)


@pytest.mark.parametrize("shape", [(1, 1, 3), (1, 7, 3), (9, 1, 3), (240, 320, 3), (37, 53, 3)])
def test_random_pixels_come_back_exactly(shape: tuple[int, int, int]) -> None:
    pixels = np.random.default_rng(sum(shape)).integers(0, 256, shape, dtype=np.uint8)
    assert np.array_equal(_decoded(encode_png(pixels)), pixels)


def test_rows_that_wrap_around_in_the_up_filter_come_back_exactly() -> None:
    # 0 under 255 and 255 under 0: the filter's differences wrap modulo 256.
    pixels = np.zeros((4, 3, 3), dtype=np.uint8)
    pixels[1::2] = 255
    assert np.array_equal(_decoded(encode_png(pixels)), pixels)


def test_the_file_is_signature_ihdr_idat_iend_with_valid_crcs() -> None:
    pixels = np.full((5, 6, 3), 17, dtype=np.uint8)
    data = encode_png(pixels)
    assert data.startswith(PNG_SIGNATURE)
    pos, kinds = len(PNG_SIGNATURE), []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body), kind
        kinds.append(kind)
        pos += 12 + length
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]
    assert struct.unpack(">IIBBBBB", data[16:29]) == (6, 5, 8, 2, 0, 0, 0)


def test_a_smooth_render_compresses_like_pillows_fast_level() -> None:
    h, w = 240, 320
    y, x = np.mgrid[0:h, 0:w]
    pixels = np.stack([100 + 80 * y / h, 120 + 60 * x / w, 140 + 0 * x], axis=-1).astype(np.uint8)
    pixels[50:90, 60:120] = (200, 30, 30)
    ours = encode_png(pixels)
    buf = io.BytesIO()
    PILImage.fromarray(pixels).save(buf, format="PNG", compress_level=1)
    assert len(ours) < 2 * len(buf.getvalue())
    assert len(ours) < pixels.nbytes // 20


@pytest.mark.parametrize(
    ("array", "why"),
    [
        (np.zeros((4, 4), dtype=np.uint8), "HxWx3"),
        (np.zeros((4, 4, 4), dtype=np.uint8), "HxWx3"),
        (np.zeros((4, 4, 3), dtype=np.float32), "uint8"),
        (np.zeros((0, 4, 3), dtype=np.uint8), "at least one pixel"),
    ],
)
def test_what_is_not_an_rgb_frame_is_refused(array: np.ndarray, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        encode_png(array)


def test_image_encoded_png_uses_the_writer_also_when_resized() -> None:
    pixels = np.random.default_rng(3).integers(0, 256, (30, 40, 3), dtype=np.uint8)
    image = Image.from_array(pixels)
    assert image.encoded("png") == encode_png(pixels)
    small = _decoded(image.encoded("png", size=(20, 15)))
    assert small.shape == (15, 20, 3)

"""Each frame is encoded at most once: requests and the trajectory writer share its bytes."""

from __future__ import annotations

import base64
import pickle
from pathlib import Path

import numpy as np

from eviseek.models import get_model
from eviseek.testing import OpenAITestServer
from eviseek.types import ChatMessage, Image, Trajectory
from eviseek.types.image import ENCODED


def _frame(seed: int, size: tuple[int, int] = (64, 48)) -> Image:
    rng = np.random.default_rng(seed)
    return Image.from_array(rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8))


def test_one_encoding_per_frame_and_settings() -> None:
    ENCODED.clear()
    img = _frame(1)
    png = img.encoded("png")
    assert img.encoded("PNG") is png and img.encode("PNG") is png  # kept with the image
    twin = Image.from_array(img.array().copy())  # same pixels, another object
    assert twin.encoded("png") == png and ENCODED.encodes == 1 and ENCODED.hits == 1
    assert img.encoded("png", size=(64, 48)) is png  # its own size is no resize
    small = img.encoded("png", size=(32, 24))
    jpeg = img.encoded("jpeg", quality=80)
    assert img.encoded("jpg", quality=80) is jpeg and img.encoded("jpeg", quality=90) != jpeg
    assert ENCODED.encodes == 4 and small != png and jpeg[:2] == b"\xff\xd8"
    # The bytes travel with the image (a Ray actor's trajectory reaches the driver encoded).
    assert pickle.loads(pickle.dumps(img)).encoded("png") == png and ENCODED.encodes == 4


def test_the_cache_is_bounded_by_bytes() -> None:
    ENCODED.clear()
    before = ENCODED.max_bytes
    ENCODED.max_bytes = 1
    try:
        a, b = _frame(2), _frame(3)
        a.encoded("png")
        b.encoded("png")
        assert len(ENCODED._items) <= 1  # the older entry left; each image keeps its own bytes
        assert a.encoded("png") and ENCODED.encodes == 2
    finally:
        ENCODED.max_bytes = before
        ENCODED.clear()


async def test_requests_and_the_saved_trajectory_share_one_encoding(tmp_path: Path) -> None:
    """Three calls that resend the history (as agents do) and the save: one PNG per frame."""
    ENCODED.clear()
    frames = [_frame(10 + i) for i in range(3)]
    with OpenAITestServer(["a", "b", "c"]) as srv:
        model = get_model("openai/test-vlm", base_url=srv.base_url, api_key="none")
        for i in range(3):
            await model.generate([ChatMessage.user(*frames[: i + 1], "what changed?")])
        await model.aclose()  # type: ignore[attr-defined]
        sent = [r["json"] for r in srv.requests]
    assert ENCODED.encodes == 3  # 1 + 2 + 3 images sent, 3 frames encoded
    urls = [p["image_url"]["url"] for p in sent[2]["messages"][-1]["content"] if p["type"] == "image_url"]
    traj = Trajectory(episode_id="e", question_id="q", agent="a", model="m", initial_image=frames[0])
    traj.answer_images = frames
    traj.save(tmp_path)
    assert ENCODED.encodes == 3  # the writer used the same bytes
    for frame, url in zip(frames, urls, strict=True):
        saved = (tmp_path / frame.path).read_bytes()  # type: ignore[operator]
        assert url == "data:image/png;base64," + base64.b64encode(saved).decode("ascii")


def test_an_image_kept_as_its_png_alone_is_the_same_image(tmp_path: Path) -> None:
    ENCODED.clear()
    y, x = np.mgrid[0:120, 0:160]
    smooth = np.stack([x, y, x + y], axis=-1).astype(np.uint8)  # compresses like a render
    smooth[40:80, 50:90] = (200, 30, 60)
    img = Image.from_array(smooth)
    pixels = img.array().copy()
    digest = img.digest()
    full = len(pickle.dumps(img))
    img.release_pixels()
    assert img.loaded and img._pixels is None and img.sha256 == digest
    sent = pickle.loads(pickle.dumps(img))
    assert len(pickle.dumps(img)) < full / 5  # the PNG, without the raw pixels
    # Decoded on demand, bit for bit; resized and JPEG encodings work from the decoded pixels.
    assert sent.array().dtype == np.uint8 and (sent.array() == pixels).all() and sent.digest() == digest
    assert sent.encoded("jpeg", quality=80)[:2] == b"\xff\xd8" and len(sent.encoded("png", size=(80, 60))) > 0
    # Saved as the same file as the image that kept its pixels.
    again = Image.from_array(pixels)
    assert (tmp_path / pickle.loads(pickle.dumps(img)).save(tmp_path)).read_bytes() == again.encoded("png")
    assert Image.open(tmp_path / again.save(tmp_path / "b")).digest() == digest
    img.release_pixels()  # nothing left to release: no error, nothing lost
    assert (img.array() == pixels).all()

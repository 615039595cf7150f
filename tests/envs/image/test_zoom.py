"""zoom(): shown-frame boxes map to original pixels, clamp, reject bad boxes, crop the original."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eviseek.envs.image import ZoomError, ZoomResult, ZoomSettings, fit_within, zoom
from eviseek.types import Image


def coded_image(width: int, height: int) -> np.ndarray:
    """Pixels that encode their own coordinates: R,G = x low/high byte, B = y low byte."""
    xs = np.arange(width, dtype=np.int64)
    ys = np.arange(height, dtype=np.int64)
    arr = np.zeros((height, width, 3), dtype=np.uint8)
    arr[:, :, 0] = (xs % 256)[None, :]
    arr[:, :, 1] = (xs // 256)[None, :]
    arr[:, :, 2] = (ys % 256)[:, None]
    return arr


SIZES = [(640, 480), (4000, 3000), (7680, 4320), (300, 2000), (2000, 300), (1001, 997)]


@pytest.mark.parametrize(("width", "height"), SIZES)
@pytest.mark.parametrize("shown_cap", [None, 1_003_520, 200_000])
def test_box_maps_back_to_original_pixels(width: int, height: int, shown_cap: int | None) -> None:
    arr = coded_image(width, height)
    sw, sh = fit_within(width, height, shown_cap)
    # A box covering the middle half of the shown frame.
    box = [sw * 0.25, sh * 0.25, sw * 0.75, sh * 0.75]
    res = zoom(arr, box, (sw, sh))
    assert isinstance(res, ZoomResult), res
    x1, y1, x2, y2 = res.box_original
    sx, sy = width / sw, height / sh
    # Floor the top-left and ceil the bottom-right (up to float noise): the crop covers the box.
    eps = 1e-6
    assert box[0] * sx - 1 < x1 <= box[0] * sx + eps and box[1] * sy - 1 < y1 <= box[1] * sy + eps
    assert box[2] * sx - eps <= x2 < box[2] * sx + 1 and box[3] * sy - eps <= y2 < box[3] * sy + 1
    assert x2 <= width and y2 <= height
    crop = res.crop.array()
    assert crop.shape == (y2 - y1, x2 - x1, 3)
    # The crop is cut from the ORIGINAL pixels: its corners carry their original coordinates.
    assert int(crop[0, 0, 0]) + 256 * int(crop[0, 0, 1]) == x1
    assert int(crop[0, 0, 2]) == y1 % 256
    assert int(crop[-1, -1, 0]) + 256 * int(crop[-1, -1, 1]) == x2 - 1
    assert not res.clamped


def test_crop_has_more_detail_than_the_shown_copy() -> None:
    arr = coded_image(7680, 4320)
    sw, sh = fit_within(7680, 4320, 1_003_520)
    res = zoom(arr, [0, 0, sw / 10, sh / 10], (sw, sh))
    assert isinstance(res, ZoomResult)
    assert res.crop.width == 768 and res.crop.height == 432  # full resolution, not sw/10 pixels


@pytest.mark.parametrize(
    ("box", "expected"),
    [
        ([-50, -20, 100, 80], (0, 0, 100, 80)),
        ([500, 400, 900, 700], (500, 400, 640, 480)),
        ([-1e9, -1e9, 1e9, 1e9], (0, 0, 640, 480)),
    ],
)
def test_boxes_are_clamped_to_the_image(box: list[float], expected: tuple[int, ...]) -> None:
    res = zoom(coded_image(640, 480), box)
    assert isinstance(res, ZoomResult)
    assert res.box_original == expected
    assert res.clamped
    assert "clamped" in res.describe()


@pytest.mark.parametrize(
    ("box", "code"),
    [
        ("10,20,30,40", "bad_format"),
        ([1, 2, 3], "bad_format"),
        ([1, 2, "x", 4], "bad_format"),
        ([0, 0, float("nan"), 10], "bad_format"),
        ([True, 0, 100, 100], "bad_format"),
        (None, "bad_format"),
        ([100, 100, 50, 200], "reversed"),
        ([100, 100, 200, 100], "reversed"),
        ([700, 500, 900, 800], "outside"),
        ([10, 10, 20, 200], "too_small"),
        ([0, 0, 100, 100], None),
    ],
)
def test_bad_boxes_become_errors_for_the_model(box: object, code: str | None) -> None:
    res = zoom(coded_image(640, 480), box)
    if code is None:
        assert isinstance(res, ZoomResult)
    else:
        assert isinstance(res, ZoomError) and res.code == code
        assert res.message and "bbox_2d" in res.message


def test_thin_boxes_are_rejected_by_aspect_ratio() -> None:
    arr = coded_image(8000, 100)
    res = zoom(arr, [0, 0, 8000, 30], settings=ZoomSettings(min_side=28))
    assert isinstance(res, ZoomError) and res.code == "too_thin"
    ok = zoom(arr, [0, 0, 2800, 30], settings=ZoomSettings(min_side=28))
    assert isinstance(ok, ZoomResult)  # aspect 2800/30 < 100


def test_min_side_is_measured_in_original_pixels() -> None:
    arr = coded_image(4000, 4000)
    # 10 shown pixels at a 1000-px shown width are 40 original pixels: accepted.
    assert isinstance(zoom(arr, [0, 0, 10, 10], (1000, 1000)), ZoomResult)
    # 5 shown pixels are 20 original pixels: too small, and the message speaks in shown units.
    err = zoom(arr, [0, 0, 5, 5], (1000, 1000))
    assert isinstance(err, ZoomError) and err.code == "too_small" and "7 (width)" in err.message


def test_normalised_coordinates_via_shown_size() -> None:
    arr = coded_image(2000, 1000)
    res = zoom(arr, [500, 500, 1000, 1000], (1000, 1000))
    assert isinstance(res, ZoomResult)
    assert res.box_original == (1000, 500, 2000, 1000)


def test_output_pixel_cap_downscales_the_crop() -> None:
    res = zoom(coded_image(4000, 3000), [0, 0, 4000, 3000], settings=ZoomSettings(max_output_pixels=10_000))
    assert isinstance(res, ZoomResult) and res.resized
    assert res.crop.width * res.crop.height <= 10_000
    assert abs(res.crop.width / res.crop.height - 4 / 3) < 0.05


def test_accepts_eviseek_and_pil_images() -> None:
    arr = coded_image(200, 100)
    a = zoom(Image.from_array(arr), [10, 10, 110, 90])
    b = zoom(Image.from_array(arr).to_pil(), [10, 10, 110, 90])
    assert isinstance(a, ZoomResult) and isinstance(b, ZoomResult)
    assert np.array_equal(a.crop.array(), b.crop.array())
    with pytest.raises(TypeError):
        zoom("not an image", [0, 0, 10, 10])


@settings(max_examples=150, deadline=None)
@given(
    box=st.lists(
        st.one_of(st.floats(allow_nan=True), st.integers(), st.text(max_size=3), st.none()), max_size=6
    ),
    sw=st.integers(1, 5000),
    sh=st.integers(1, 5000),
)
def test_zoom_never_raises_on_model_boxes(box: list[object], sw: int, sh: int) -> None:
    res = zoom(coded_image(64, 48), box, (sw, sh), settings=ZoomSettings(min_side=1))
    if isinstance(res, ZoomResult):
        x1, y1, x2, y2 = res.box_original
        assert 0 <= x1 < x2 <= 64 and 0 <= y1 < y2 <= 48
        assert res.crop.array().shape == (y2 - y1, x2 - x1, 3)
    else:
        assert isinstance(res, ZoomError)

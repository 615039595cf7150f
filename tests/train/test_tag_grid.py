"""The tag-grid task: deterministic rows whose need-zoom evidence vanishes at the shown size."""

from __future__ import annotations

import numpy as np
from PIL import Image as PILImage

from eviseek.train.frames import smart_resize
from eviseek.train.tag_grid import (
    COLOURS,
    TAG_COLOURS,
    TagGridConfig,
    cell_box,
    offered_colours,
    tag_grid_row,
    tag_grid_rows,
)


def _colour_pixels(arr: np.ndarray, colour: str, tol: int = 1) -> int:
    return int((np.abs(arr.astype(int) - np.array(COLOURS[colour])).max(axis=2) <= tol).sum())


def test_rows_are_deterministic_and_seeds_do_not_overlap() -> None:
    a, b = tag_grid_rows(4, seed=0), tag_grid_rows(4, seed=0)
    assert [r.model_dump() for r in a] == [r.model_dump() for r in b]
    assert {r.id for r in a}.isdisjoint({r.id for r in tag_grid_rows(4, seed=1)})


def test_need_zoom_question_names_the_cell_that_holds_the_answer() -> None:
    cfg = TagGridConfig()
    row = tag_grid_row(3, cfg, needs_zoom=True)
    assert row.needs_zoom and row.options is None and row.ground_truth in COLOURS
    assert row.answer_kind == "text" and "Answer with one of: red, green, blue, yellow." in row.question
    assert "row" in row.question and "column" in row.question
    # Rows are letters and columns numbers, so the two never share a token.
    r, c = next(
        (r, c) for r in range(4) for c in range(4) if f"row {'ABCD'[r]}, column {c + 1}?" in row.question
    )
    assert [int(v) for v in row.target_boxes[0]] == [int(v) for v in cell_box(cfg, r, c)]
    x1, y1, x2, y2 = (int(v) for v in row.target_boxes[0])
    assert [x1, y1, x2, y2] in [[int(v) for v in cell_box(cfg, r, c)] for r in range(4) for c in range(4)]
    arr = np.asarray(row.pil_images()[0])
    cell = arr[y1:y2, x1:x2]
    # The named cell holds exactly one tag of the answer's colour (8x8 pixels) ...
    assert _colour_pixels(cell, row.ground_truth) == cfg.tag_size**2
    # ... which shrinks below one pixel's worth of colour in the image the model is shown.
    h, w = smart_resize(cfg.size, cfg.size, 32, 32 * 32, 64 * 64)
    shown = np.asarray(PILImage.fromarray(arr).resize((w, h), PILImage.Resampling.BICUBIC))
    assert (w, h) == (64, 64) and _colour_pixels(shown, row.ground_truth, tol=10) <= 1


def test_no_need_question_asks_for_the_background() -> None:
    row = tag_grid_row(5, needs_zoom=False)
    assert not row.needs_zoom and row.ground_truth in COLOURS and "background" in row.question
    arr = np.asarray(row.pil_images()[0]).astype(int)
    assert np.abs(arr.mean(axis=(0, 1)) - np.array(COLOURS[row.ground_truth])).max() < 15
    assert row.extra_info["zoom_pad"] == 0.0
    # The warm-up's tool-on trace for a background question zooms on the whole image.
    assert row.target_boxes == [[0.0, 0.0, 512.0, 512.0]]


def test_zoom_share_splits_the_rows() -> None:
    rows = tag_grid_rows(200, seed=2, config=TagGridConfig(size=128, tag_size=2))
    share = sum(bool(r.needs_zoom) for r in rows) / len(rows)
    assert 0.4 < share < 0.6


def test_own_tag_colours_give_the_tags_a_palette_no_background_uses() -> None:
    cfg = TagGridConfig(tag_size=24, tag_colours="own")
    row = tag_grid_row(3, cfg, needs_zoom=True)
    assert row.ground_truth in TAG_COLOURS
    assert offered_colours(cfg, True) == list(TAG_COLOURS)
    assert f"Answer with one of: {', '.join(TAG_COLOURS)}." in row.question
    x1, y1, x2, y2 = (int(v) for v in row.target_boxes[0])
    cell = np.asarray(row.pil_images()[0])[y1:y2, x1:x2]
    rgb = np.array(TAG_COLOURS[row.ground_truth])
    # The named cell holds exactly one tag, in the answer's colour from the tags' own palette.
    assert int((np.abs(cell.astype(int) - rgb).max(axis=2) <= 1).sum()) == cfg.tag_size**2
    # Background questions still offer (and are answered with) the four background colours.
    back = tag_grid_row(5, cfg, needs_zoom=False)
    assert back.ground_truth in COLOURS and offered_colours(cfg, False) == list(COLOURS)
    assert "Answer with one of: red, green, blue, yellow." in back.question
    assert set(TAG_COLOURS).isdisjoint(COLOURS)


def test_shared_tag_colours_are_the_default_and_leave_rows_unchanged() -> None:
    assert TagGridConfig().tag_colours == "shared"
    row = tag_grid_row(3, TagGridConfig(), needs_zoom=True)
    assert row.ground_truth in COLOURS and offered_colours(TagGridConfig(), True) == list(COLOURS)


def test_majority_question_needs_the_whole_image_and_a_one_cell_zoom_can_mislead() -> None:
    cfg = TagGridConfig(hurt_share=0.25, tag_colours="own")
    side = cfg.size // cfg.grid
    misled = 0
    for seed in range(12):
        row = tag_grid_row(seed, cfg, kind="majority")
        assert not row.needs_zoom and row.extra_info["kind"] == "majority"
        assert "fills the most cells" in row.question and row.ground_truth in COLOURS
        arr = np.asarray(row.pil_images()[0]).astype(int)
        # Each cell's fill is the colour nearest its mean (the noise and tiny tags average out).
        fills = []
        for r in range(cfg.grid):
            for c in range(cfg.grid):
                mean = arr[r * side : (r + 1) * side, c * side : (c + 1) * side].mean(axis=(0, 1))
                fills.append(min(COLOURS, key=lambda k: float(np.abs(mean - np.array(COLOURS[k])).sum())))
        counts = {k: fills.count(k) for k in COLOURS}
        lo, hi = cfg.majority_cells
        assert lo <= counts[row.ground_truth] <= hi
        assert all(v < counts[row.ground_truth] for k, v in counts.items() if k != row.ground_truth)
        # The warm-up's tool-on trace zooms on the top-left cell only.
        assert row.target_boxes == [cell_box(cfg, 0, 0)]
        misled += fills[0] != row.ground_truth
    assert misled >= 3  # the one-cell crop shows another colour often enough to cost answers


def test_hurt_share_mixes_the_three_kinds_and_leaves_other_configs_unchanged() -> None:
    from collections import Counter

    import pytest
    from pydantic import ValidationError

    rows = tag_grid_rows(200, seed=7, config=TagGridConfig(zoom_share=0.5, hurt_share=0.25))
    kinds = Counter(r.extra_info["kind"] for r in rows)
    assert set(kinds) == {"tag", "background", "majority"}
    assert 0.15 < kinds["majority"] / 200 < 0.35 and 0.4 < kinds["tag"] / 200 < 0.6
    plain = tag_grid_rows(20, seed=7)
    assert {r.extra_info["kind"] for r in plain} <= {"tag", "background"}
    with pytest.raises(ValidationError, match="exceeds 1"):
        TagGridConfig(zoom_share=0.8, hurt_share=0.3)
    with pytest.raises(ValidationError, match="too small"):
        TagGridConfig(majority_cells=(4, 6))

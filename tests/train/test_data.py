"""Training-data converters on rows in the public layouts, and the synthetic generator."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

from eviseek.envs.image import ZoomResult, zoom
from eviseek.train.data import (
    SyntheticConfig,
    TrainingRow,
    from_arxivqa_row,
    from_thinklite_row,
    from_vstar_row,
    load_saved_rows,
    load_training_rows,
    save_rows,
    synthetic_row,
    synthetic_rows,
)
from eviseek.train.rewards import AccuracyReward

SMALL = SyntheticConfig(width=640, height=480, target_size=24, distractors=4)


def _png(colour: tuple[int, int, int] = (10, 200, 30), size: tuple[int, int] = (64, 48)) -> bytes:
    buf = io.BytesIO()
    PILImage.new("RGB", size, colour).save(buf, format="PNG")
    return buf.getvalue()


def test_deepeyes_parquet_rows_convert(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        {
            "data_source": "vstar",
            "prompt": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "<image>\nWhat colour is the cup? (A) red (B) green"},
            ],
            "images": [{"bytes": _png(), "path": None}],
            "ability": "vqa",
            "env_name": "visual_toolbox_v2",
            "reward_model": {"ground_truth": "B", "style": "model"},
            "extra_info": {"index": 7, "answer": "B", "split": "train"},
        },
        {
            "data_source": "thinklite_eureka",
            "prompt": [{"role": "user", "content": "<image>How many sides?"}],
            "images": [{"bytes": _png(), "path": None}],
            "ability": "math",
            "env_name": "visual_toolbox_v2",
            "reward_model": {"ground_truth": "6", "style": "model"},
            "extra_info": {"index": 8, "answer": "6", "split": "train", "question": "How many sides?"},
        },
    ]
    path = tmp_path / "deepeyes.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    out = load_training_rows(path, "deepeyes")
    assert [r.id for r in out] == ["7", "8"]
    vstar, think = out
    assert (
        vstar.options == ["red", "green"] and vstar.ground_truth == "green" and vstar.answer_kind == "option"
    )
    assert "(B) green" in vstar.question and "<image>" not in vstar.question
    assert think.source == "thinklite" and think.answer_kind == "integer" and think.ground_truth == "6"
    assert vstar.pil_images()[0].size == (64, 48)
    trl = vstar.to_trl()
    assert trl["prompt"][1]["content"][0] == {"type": "image"} and trl["ground_truth"] == "green"
    # The rewards read the TRL row's columns directly.
    assert AccuracyReward()(
        ["<tool_off><think>x</think><answer>B</answer>"], **{k: [v] for k, v in trl.items()}
    ) == [1.0]


def test_vstar_arxivqa_thinklite_rows(tmp_path: Path) -> None:
    (tmp_path / "img.png").write_bytes(_png())
    v = from_vstar_row(
        {
            "question": "What is the colour of the bag?",
            "options": ["black", "white"],
            "image": "img.png",
            "bbox": [10, 20, 30, 40],
            "target_object": ["bag"],
        },
        base_dir=tmp_path,
    )
    assert v.ground_truth == "black" and v.target_boxes == [[10, 20, 40, 60]] and v.needs_zoom
    a = from_arxivqa_row(
        {
            "id": "x1",
            "question": "Which curve rises?",
            "options": ["A. blue", "B. red"],
            "label": "B",
            "image": str(tmp_path / "img.png"),
            "rationale": "because",
        }
    )
    assert a.options == ["blue", "red"] and a.ground_truth == "red" and a.source == "chart"
    t = from_thinklite_row({"problem": "<image>Find x. (A) 2 (B) 3", "answer": "A", "image": _png()})
    assert t.options == ["2", "3"] and t.ground_truth == "2"
    with pytest.raises(ValueError, match="problem"):
        from_thinklite_row({"answer": "1", "image": _png()})
    with pytest.raises(ValueError, match="unknown layout"):
        load_training_rows(tmp_path / "img.png", "nope")


def test_synthetic_rows_are_deterministic_and_answerable() -> None:
    a = synthetic_rows(6, seed=3, config=SMALL)
    b = synthetic_rows(6, seed=3, config=SMALL)
    assert [r.model_dump() for r in a] == [r.model_dump() for r in b]
    assert synthetic_rows(1, seed=4, config=SMALL)[0].images != a[0].images
    kinds = {r.needs_zoom for r in synthetic_rows(8, seed=1, config=SMALL)}
    assert kinds == {True, False}
    for r in a:
        assert r.ground_truth in (r.options or [])
        assert len(r.target_boxes) == 1
        img = np.asarray(r.pil_images()[0])
        assert img.shape == (480, 640, 3)


def test_zoom_target_is_small_and_the_tag_is_in_its_box() -> None:
    row = synthetic_row(11, SMALL, needs_zoom=True)
    x1, y1, x2, y2 = row.target_boxes[0]
    assert (x2 - x1) == 24 and "letter" in row.question
    img = np.asarray(row.pil_images()[0])
    res = zoom(img, [x1, y1, x2 + 10, y2 + 10])
    assert isinstance(res, ZoomResult)
    crop = res.crop.array()
    assert (crop[2:20, 2:20] > 240).all(axis=-1).mean() > 0.3  # white tag with a dark letter
    assert (crop < 60).all(axis=-1).any()
    glob = synthetic_row(12, SMALL, needs_zoom=False)
    assert glob.options is not None and sorted(glob.options) == ["left", "right"]
    gx1, _, gx2, _ = glob.target_boxes[0]
    assert (glob.ground_truth == "left") == ((gx1 + gx2) / 2 < 320)


def test_rows_round_trip_through_files(tmp_path: Path) -> None:
    rows = synthetic_rows(3, seed=0, config=SMALL)
    for suffix in (".jsonl", ".parquet"):
        path = save_rows(rows, tmp_path / f"rows{suffix}")
        back = load_saved_rows(path)
        assert [r.model_dump() for r in back] == [r.model_dump() for r in rows]
    line = (tmp_path / "rows.jsonl").read_text().splitlines()[0]
    assert isinstance(json.loads(line)["images"][0], str)  # base64 text, not raw bytes
    q = rows[0].to_question()
    assert q.initial_image is not None and q.initial_image.width == 640
    assert isinstance(TrainingRow.model_validate_json(line), TrainingRow)

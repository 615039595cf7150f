"""Reasoning-benchmark loaders on fixtures written here in each benchmark's usual file form."""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path

import pytest
from PIL import Image as PILImage

from eviseek.autotool.reasoning import extract_answer, load_reasoning, score_reasoning
from eviseek.errors import ConfigError


def _png(colour: tuple[int, int, int] = (200, 10, 10)) -> bytes:
    buf = io.BytesIO()
    PILImage.new("RGB", (40, 30), colour).save(buf, format="PNG")
    return buf.getvalue()


def _tsv(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter="\t")
        w.writeheader()
        w.writerows(rows)
    return path


def test_mathvista_parquet_with_choices_precision_and_free_form(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        {
            "pid": "1",
            "question": "Which bar is tallest?",
            "choices": ["red", "green", "blue"],
            "answer": "green",
            "question_type": "multi_choice",
            "answer_type": "text",
            "precision": None,
            "unit": None,
            "decoded_image": {"bytes": _png(), "path": None},
        },
        {
            "pid": "2",
            "question": "What is the slope?",
            "choices": None,
            "answer": "0.25",
            "question_type": "free_form",
            "answer_type": "float",
            "precision": 2.0,
            "unit": None,
            "decoded_image": {"bytes": _png((0, 0, 200)), "path": None},
        },
    ]
    path = tmp_path / "testmini.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    qs = load_reasoning("mathvista", path, tmp_path / "img")
    assert [q.id for q in qs] == ["mathvista-1", "mathvista-2"]
    mc, free = qs
    assert mc.contract.kind == "option" and mc.ground_truth == "B" and "(B) green" in mc.text
    assert mc.initial_image is not None and mc.initial_image.width == 40
    assert score_reasoning("<think>tall</think><answer>(B)</answer>", mc) == (True, "B")
    assert score_reasoning("The answer is green.", mc) == (True, "B")
    assert score_reasoning("<answer>A</answer>", mc)[0] is False
    assert free.contract.kind == "text" and free.metadata["precision"] == 2.0
    assert score_reasoning("so the slope is 1/4, final answer: 0.251", free) == (True, "0.251")
    assert score_reasoning("<answer>0.3</answer>", free)[0] is False


def test_mathverse_json_and_mathvision_jsonl(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "a.png").write_bytes(_png())
    verse = [
        {
            "sample_index": "7",
            "problem_version": "Vision Only",
            "question": "Find the angle ABC. Choices: A:30 B:45 C:60 D:90",
            "answer": "45",
            "question_type": "free-form",
            "image": "images/a.png",
        }
    ]
    (tmp_path / "mathverse.json").write_text(json.dumps(verse))
    (q,) = load_reasoning("mathverse", tmp_path / "mathverse.json", tmp_path / "img")
    assert q.metadata["problem_version"] == "Vision Only" and q.initial_image is not None
    assert score_reasoning("angle = 45 degrees, so the answer is 45", q) == (True, "45")
    vision = [{"id": "3", "question": "How many?", "options": ["1", "2", "3"], "answer": "C", "level": 2}]
    (tmp_path / "mv.jsonl").write_text("\n".join(json.dumps(r) for r in vision))
    (mv,) = load_reasoning("mathvision", tmp_path / "mv.jsonl", tmp_path / "img")
    assert mv.ground_truth == "C" and mv.metadata["level"] == "2" and mv.initial_image is None
    assert score_reasoning("<answer>C</answer>", mv) == (True, "C")


def test_wemath_tsv_with_option_string(tmp_path: Path) -> None:
    (tmp_path / "w.png").write_bytes(_png())
    rows = [
        {
            "ID": "1@3",
            "question": "What is the area?",
            "option": "A. 3; B. 4; C. 5; D. 6",
            "answer": "B",
            "key": "3steps",
            "image_path": "w.png",
        }
    ]
    (q,) = load_reasoning("wemath", _tsv(tmp_path / "wemath.tsv", rows), tmp_path / "img")
    assert (
        q.contract.options == ["3", "4", "5", "6"] and q.ground_truth == "B" and q.metadata["key"] == "3steps"
    )
    assert score_reasoning("I think (B) 4 is right", q) == (True, "B")


def test_dynamath_json_and_logicvista_vlmevalkit_tsv(tmp_path: Path) -> None:
    dyn = [{"id": "9", "question": "Compute f(2).", "ground_truth": "12", "answer_type": "float"}]
    (tmp_path / "dyn.json").write_text(json.dumps(dyn))
    (d,) = load_reasoning("dynamath", tmp_path / "dyn.json", tmp_path / "img")
    assert d.ground_truth == "12" and score_reasoning("f(2) = 3*4 = 12.0", d) == (True, "12.0")
    b64 = base64.b64encode(_png()).decode()
    rows = [
        {
            "index": "0",
            "image": b64,
            "question": "Which shapes are red?",
            "A": "circle",
            "B": "square",
            "C": "star",
            "answer": "A, C",
            "skill": "spatial",
        }
    ]
    (lv,) = load_reasoning("logicvista", _tsv(tmp_path / "LogicVista.tsv", rows), tmp_path / "img")
    assert lv.ground_truth == "A,C" and lv.subcategory == "spatial" and lv.initial_image is not None
    assert score_reasoning("<answer>C, A</answer>", lv) == (True, "A,C")
    assert score_reasoning("<answer>A</answer>", lv)[0] is False
    assert extract_answer("no letter here", lv) is None


def test_bad_input_is_named(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(json.dumps([{"question": "q"}]))
    with pytest.raises(ConfigError, match="lacks a question or an answer"):
        load_reasoning("mathvista", tmp_path / "x.json", tmp_path / "img")
    with pytest.raises(ConfigError, match="unknown reasoning benchmark 'mmmu'"):
        load_reasoning("mmmu", tmp_path / "x.json", tmp_path / "img")

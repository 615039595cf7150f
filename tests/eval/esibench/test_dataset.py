"""``esibench:PATH``: records to Questions, exclusions, images, HF rows, and the counts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.errors import ConfigError
from eviseek.eval.datasets import load_dataset
from eviseek.eval.esibench import count_subcategories, iter_records, load_with_exclusions
from eviseek.eval.esibench.dataset import LoadOptions
from tests.eval.esibench.conftest import FIXTURES


def by_sub(questions: list) -> dict[str, object]:
    return {q.subcategory: q for q in questions}


def test_every_family_loads_with_contracts_truths_and_references() -> None:
    qs = load_dataset(f"esibench:{FIXTURES}")
    assert len(qs) == 16 and len({q.family for q in qs}) == 10
    subs = by_sub(qs)
    assert subs["Long-Term Navigation"].contract.kind == "sequence"
    assert subs["Regional Boundary"].contract.options == ["hall_0", "attic_0"]
    assert (
        subs["Counting w Occlusion"].contract.kind == "integer"
        and subs["Counting w Occlusion"].ground_truth == "3"
    )
    assert subs["Stacking & Stability"].ground_truth == ["tray, bowl, cup", "tray, cup, bowl"]
    assert subs["Liquid Volume"].contract.options == ["left", "right"]
    assert subs["Material Transparency"].contract.kind == "yes_no"
    assert subs["Deformable"].ground_truth == "spoon"
    # Action order inference: the view the official camera picks (view 2) sets truth and wording.
    action = subs["Action Order Inference"]
    assert action.ground_truth == "right left" and "Pot right" in action.text
    meta = subs["Unobserved Change"].metadata["esibench"]
    assert meta["task"] == "unobserved_changes" and meta["relpath"].endswith(
        "current_state_reasoning__q_000.json"
    )
    assert len(subs["Unobserved Change"].reference_images) == 2
    assert all(Path(str(i.path)).is_file() for i in subs["Deformable"].reference_images)
    for q in qs:  # every evaluated record accepts its own ground truth under the official rules
        from eviseek.answers import score_answer

        truth = q.ground_truth[0] if isinstance(q.ground_truth, list) else q.ground_truth
        assert score_answer(q, str(truth)).correct, q.id


def test_exclusions_and_the_all_flag() -> None:
    kept, dropped = load_with_exclusions(FIXTURES, LoadOptions())
    assert {q.metadata["esibench"]["excluded"] for q in dropped} == {
        "official:storage_variant",
        "official:missing_phase_reference",
        "ours:incomplete_reference_render",
    }
    assert len(load_dataset(f"esibench:{FIXTURES}?all=1")) == len(kept) + len(dropped) == 19


def test_a_missing_image_is_named_and_the_flag_loads_without(esi_tree: Path) -> None:
    image = next(esi_tree.rglob("main_view.png"))
    image.unlink()
    with pytest.raises(ConfigError, match=r"reference image main_view\.png not found.*images=skip"):
        load_dataset(f"esibench:{esi_tree}")
    q = by_sub(load_dataset(f"esibench:{esi_tree}?images=skip"))["Deformable"]
    assert q.reference_images == [] and q.metadata["esibench"]["images_missing"] == ["main_view.png"]
    with pytest.raises(ConfigError, match="not understood"):
        load_dataset(f"esibench:{esi_tree}?imgs=off")


def test_a_blank_reference_render_excludes_its_record(esi_tree: Path) -> None:
    image = next(esi_tree.rglob("den_1/image2_box_00.png"))
    PILImage.fromarray(np.zeros((8, 8, 3), np.uint8)).save(image)
    kept, dropped = load_with_exclusions(esi_tree, LoadOptions())
    assert "ours:unrenderable_reference_image" in {q.metadata["esibench"]["excluded"] for q in dropped}
    assert "Unobserved Change" not in {q.subcategory for q in kept}


def test_hugging_face_rows_load_like_the_tree(tmp_path: Path) -> None:
    rows = tmp_path / "questions.jsonl"
    with open(rows, "w") as fh:
        for record in iter_records(FIXTURES):
            fh.write(json.dumps(json.loads(Path(record.source).read_text())) + "\n")
    tree = {q.id: q for q in load_dataset(f"esibench:{FIXTURES}?images=skip&all=1")}
    flat = {q.id: q for q in load_dataset(f"esibench:{rows}?images=skip&all=1")}
    assert tree.keys() == flat.keys()
    for qid, q in tree.items():
        assert (q.text, q.ground_truth, q.contract) == (
            flat[qid].text,
            flat[qid].ground_truth,
            flat[qid].contract,
        )
    # Rows carry no file name, so the official file-name rule cannot drop the storage variant.
    assert len(load_dataset(f"esibench:{rows}?images=skip")) == 17


def test_bad_paths_and_records_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_dataset(f"esibench:{tmp_path / 'nope'}")
    with pytest.raises(ConfigError, match="no ESI-Bench records"):
        load_dataset(f"esibench:{tmp_path}")
    bad = tmp_path / "rows.jsonl"
    bad.write_text('{"id": 1}\n')
    with pytest.raises(ConfigError, match=r"rows\.jsonl:1: not an ESI-Bench question record"):
        load_dataset(f"esibench:{bad}")


def test_stats_command_prints_counts_beside_the_paper() -> None:
    rows = count_subcategories(FIXTURES)
    assert sum(r.records for r in rows) == 19 and sum(r.questions for r in rows) == 16
    result = CliRunner().invoke(app, ["esibench", "stats", str(FIXTURES), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    change = next(r for r in data if r["subcategory"] == "Unobserved Change")
    assert change["records"] == 3 and change["questions"] == 1 and change["paper"] == 142
    text = CliRunner().invoke(app, ["esibench", "stats", str(FIXTURES)])
    assert (
        text.exit_code == 0
        and "Rigid Containment" in text.output
        and "official:storage_variant=1" in text.output
    )
    missing = CliRunner().invoke(app, ["esibench", "stats", "/nonexistent/esi"])
    assert missing.exit_code == 1 and "does not exist" in missing.output

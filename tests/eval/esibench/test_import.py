"""``eviseek esibench import``: official answer files into a run that score/report/judge/view read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.eval.datasets import load_dataset
from eviseek.eval.rundir import load_run
from eviseek.testing.openai_server import OpenAITestServer
from tests.eval.esibench.conftest import FIXTURES


def answer_file(
    results: Path,
    steps_root: Path,
    q: Any,
    answer: Any,
    *,
    task_name: str,
    n_steps: int = 2,
    correct: bool | None = None,
    write_images: bool = True,
) -> Path:
    """One answer file in the official layout, with step images on disk (written for the test)."""
    meta = q.metadata["esibench"]
    scene, room, qid = q.scene["scene"], q.scene["room"], meta["stem"]
    step_dir = steps_root / task_name / scene / room / qid
    history = []
    for step in range(1, n_steps + 1):
        name = f"step_{step:03d}.png"
        if write_images:
            step_dir.mkdir(parents=True, exist_ok=True)
            PILImage.fromarray(np.full((12, 16, 3), 40 * step, np.uint8)).save(step_dir / name)
        last = step == n_steps
        history.append(
            {
                "step": step,
                "action": "stop" if last else "turn_left",
                "answer": answer if last else "not sure",
                "confidence": 0.9 if last else 0.2,
                "reasoning": "looked",
                "image": name,
                "camera": {"position": [0, 0, 1], "quaternion_xyzw": [0, 0, 0, 1]},
                "action_result": {}
                if last
                else {"handled": True, "operation": "camera", "action": "turn_left"},
                "extra_image_paths": [],
                "raw_output": json.dumps({"action": "x", "answer": answer}),
                "finish_reason": "stop",
            }
        )
    data = {
        "source_json": f"/elsewhere/dataset/json_clean/{meta['relpath']}",
        "task": task_name,
        "scene": scene,
        "room": room,
        "question_id": qid,
        "provider": "gpt",
        "model": "gpt-test",
        "final_answer": {
            "answer": answer,
            "answer_step": n_steps,
            "confidence": 0.9,
            "reasoning": "looked",
            "steps": n_steps,
            "stopped_by": "confidence_threshold",
        },
        "history": history,
        "step_image_dir": str(step_dir),
        "camera_info": {},
        "env_postprocess": {},
    }
    if correct is not None:
        data["correct"] = correct
    path = results / task_name / scene / room / f"{qid}_answer.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def test_import_reports_bad_files_and_the_run_scores_reports_judges_and_views(tmp_path: Path) -> None:
    qs = {q.subcategory: q for q in load_dataset(f"esibench:{FIXTURES}?images=skip")}
    results, steps = tmp_path / "results", tmp_path / "steps"
    answer_file(results, steps, qs["Counting w Occlusion"], "4", task_name="counting", correct=False)
    answer_file(results, steps, qs["Material Transparency"], "yes", task_name="transparent", correct=True)
    answer_file(results, steps, qs["Agent Observation"], 2, task_name="multiagent", correct=True)
    answer_file(
        results, steps, qs["Stacking & Stability"], "tray | bowl | cup", task_name="stacking", correct=True
    )
    moved = tmp_path / "moved_steps"
    answer_file(results, moved, qs["Deformable"], "B", task_name="deformable", correct=True)
    moved.rename(tmp_path / "new_steps")  # the recorded step folder is gone; --step-images finds it
    bad = results / "line" / "s" / "r"
    bad.mkdir(parents=True)
    (bad / "q_1_answer.json").write_text('{"final_answer": {"answer": "yes"')  # cut off mid-write
    (bad / "q_2_answer.json").write_text(json.dumps({"history": [], "source_json": "x.json"}))
    (bad / "q_3_answer.json").write_text(
        json.dumps({"source_json": "/a/b/c/d/e/f.json", "final_answer": {"answer": "yes"}, "history": []})
    )
    (bad / "q_4_answer.json").write_text(json.dumps({"skipped": True, "skip_reason": "storage_variant"}))
    variant = "Physical Structure/Rigid Containment/Toy_house/attic_0/Toy_house_storage_0__variant_1.json"
    (bad / "q_5_answer.json").write_text(
        json.dumps({"source_json": f"/x/{variant}", "final_answer": {"answer": "basket"}, "history": []})
    )
    run = tmp_path / "run"
    res = CliRunner().invoke(
        app,
        [
            "esibench",
            "import",
            str(results),
            "--questions",
            str(FIXTURES),
            "--out",
            str(run),
            "--step-images",
            str(tmp_path / "new_steps"),
            "--step-images",
            str(steps),  # the official --step-image-root: outside the results root, so named
        ],
    )
    assert res.exit_code == 0, res.output
    assert "imported 5 answer file(s) for 16 question(s)" in res.output
    for name, why in (
        ("q_1", "not valid JSON"),
        ("q_2", "no final_answer"),
        ("q_3", "not in --questions"),
        ("q_5", "excludes (official:storage_variant)"),
    ):
        assert f"{bad / (name + '_answer.json')}: " in res.output and why in res.output
    assert "1 file(s) record a question the official task skipped" in res.output
    assert "1 answer(s) score differently" in res.output  # the '|' stacking order the official code rejects

    data = load_run(run)
    got = data.results["esibench-official"]
    assert len(got) == 5 and len(data.questions) == 16
    assert (
        got[qs["Counting w Occlusion"].id].score == pytest.approx(2 / 3)
        and not got[qs["Counting w Occlusion"].id].correct
    )
    assert got[qs["Agent Observation"].id].correct and got[qs["Deformable"].id].correct
    # Scored by the paper's rules (the default), which read a '|'-separated order.
    assert got[qs["Stacking & Stability"].id].correct
    deformable = run / "episodes" / "esibench-official" / qs["Deformable"].id / "trajectory.json"
    traj = json.loads(deformable.read_text())
    assert len(traj["steps"]) == 2 and traj["steps"][0]["image"]["path"].startswith("images/")

    score = CliRunner().invoke(app, ["score", str(run), "--json"])
    assert score.exit_code == 0, score.output
    assert json.loads(score.output)["agents"][0]["overall"]["correct"] == 4
    assert json.loads(score.output)["rules"] == {"esibench:paper": 16}
    official = CliRunner().invoke(app, ["score", str(run), "--json", "--rules", "esibench:official"])
    assert official.exit_code == 0, official.output
    assert json.loads(official.stdout)["agents"][0]["overall"]["correct"] == 3
    report = CliRunner().invoke(app, ["report", str(run), "--resamples", "100"])
    assert report.exit_code == 0, report.output
    view = CliRunner().invoke(app, ["view", str(run)])
    assert view.exit_code == 0 and "wrote 5 episode page(s)" in view.output, view.output
    with OpenAITestServer(['{"reason": "ok", "grade": 1}'] * 5) as srv:
        judged = CliRunner().invoke(
            app, ["judge", str(run), "--model", "openai/j", "--base-url", srv.base_url]
        )
    assert judged.exit_code == 0, judged.output
    assert (run / "support.jsonl").is_file()

    again = CliRunner().invoke(
        app, ["esibench", "import", str(results), "--questions", str(FIXTURES), "--out", str(run)]
    )
    assert again.exit_code == 1 and "already holds a run" in again.output

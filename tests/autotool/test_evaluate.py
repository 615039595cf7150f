"""`run_eval`: run directory, scoring, per-benchmark metrics, resumption; and the metric helpers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from eviseek.autotool.evaluate import AutoToolEvalConfig, cycle_accuracy, pope_metrics, run_eval
from eviseek.errors import ConfigError
from eviseek.eval.store import load_results
from eviseek.models import ScriptedModel
from eviseek.types import ChatMessage, EpisodeResult, GenerateConfig, Trajectory

CALL = '<tool_call>{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [100, 80, 220, 160]}}</tool_call>'


def hrbench_policy(messages: Sequence[ChatMessage], config: GenerateConfig) -> str:
    """Zoom first on 'single' questions (sign 0), then pick 'cat'; answer 'dog' directly on sign 1."""
    options = config.metadata["options"]
    question = messages[1].text()
    if "sign 0" in question:
        if config.metadata["turn"] == 0:
            return f"<tool_on><think>small sign</think>{CALL}"
        return f"<think>a cat</think><answer>{'ABCD'[options.index('cat')]}</answer>"
    return f"<tool_off><think>clear</think><answer>{'ABCD'[options.index('dog')]}</answer>"


def _cfg(dataset: str, **kw: object) -> AutoToolEvalConfig:
    return AutoToolEvalConfig(
        model="scripted/policy", dataset=dataset, agent_config={"max_pixels": 40_000}, **kw
    )


def test_hrbench_run_directory_and_metrics(hrbench_tsv: Path, tmp_path: Path) -> None:
    model = ScriptedModel(hrbench_policy, name="scripted/policy")
    out = tmp_path / "run"
    summary = asyncio.run(run_eval(_cfg(f"hrbench4k:{hrbench_tsv}"), out, model))
    assert summary.overall.n == 8 and summary.overall.accuracy == 0.5
    splits = {s.name: s for s in summary.splits}
    assert splits["single"].accuracy == 1.0 and splits["single"].tool_on_share == 1.0
    assert splits["single"].calls_per_episode == 1.0
    assert splits["cross"].accuracy == 0.0 and splits["cross"].tool_on_share == 0.0
    assert summary.headline["cycle_avg_single"] == 1.0 and summary.headline["cycle_avg_overall"] == 0.5
    assert summary.by_mode == {"tool_on": 1.0, "tool_off": 0.0}
    assert summary.overall.input_tokens is not None and summary.overall.latency_s >= 0
    # The standard run directory.
    assert json.loads((out / "run.json").read_text())["agents"] == ["autotool"]
    assert len((out / "questions.jsonl").read_text().splitlines()) == 8
    rows = load_results(out)
    assert len(rows) == 8 and all(r.agent == "autotool" for r in rows)
    traj = Trajectory.load(out / "episodes" / "autotool" / "0")
    assert traj.result is not None and traj.result.correct and traj.steps[0].feedback.success
    assert (out / "autotool_summary.json").exists()
    assert "single" in summary.table()


def test_resume_skips_finished_questions_and_refuses_other_settings(
    hrbench_tsv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    first = ScriptedModel(hrbench_policy, name="scripted/policy")
    asyncio.run(run_eval(_cfg(f"hrbench4k:{hrbench_tsv}"), out, first))
    calls_first = len(first.requests)
    again = ScriptedModel(hrbench_policy, name="scripted/policy")
    summary = asyncio.run(run_eval(_cfg(f"hrbench4k:{hrbench_tsv}"), out, again))
    assert len(again.requests) == 0 and summary.overall.n == 8 and calls_first == 12
    with pytest.raises(ConfigError, match="other settings"):
        asyncio.run(run_eval(_cfg(f"hrbench4k:{hrbench_tsv}", seed=3), out, again))


def test_failed_episodes_are_recorded_then_retried(pope_jsonl: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"

    def flaky(messages: Sequence[ChatMessage], config: GenerateConfig) -> str:
        if "thing 2" in messages[1].text():
            raise RuntimeError("server hiccup")
        return "<tool_off><think>x</think><answer>yes</answer>"

    summary = asyncio.run(
        run_eval(_cfg(f"pope:{pope_jsonl}"), out, ScriptedModel(flaky, name="scripted/policy"))
    )
    assert summary.overall.errors == 1
    failed = [r for r in load_results(out) if r.error]
    assert len(failed) == 1 and "server hiccup" in (failed[0].error or "")
    steady = ScriptedModel(["<tool_off><think>x</think><answer>yes</answer>"], name="scripted/policy")
    summary = asyncio.run(run_eval(_cfg(f"pope:{pope_jsonl}"), out, steady))
    assert summary.overall.errors == 0 and steady.remaining == 0
    # Always "yes": 3 of 6 right, precision 0.5, recall 1, yes-ratio 1.
    h = summary.headline
    assert (h["pope_accuracy"], h["pope_precision"], h["pope_recall"], h["pope_yes_ratio"]) == (
        0.5,
        0.5,
        1.0,
        1.0,
    )
    assert h["pope_f1"] == pytest.approx(2 / 3)


def test_grounding_boxes_are_mapped_from_the_shown_frame(refcoco_parquet: Path, tmp_path: Path) -> None:
    # 640x480 shown at max_pixels=40_000 -> 230x172 (scale 0.359..): answer in the shown frame.
    def ground(messages: Sequence[ChatMessage], config: GenerateConfig) -> str:
        w, h = config.metadata["image_size"]
        s = w / 640
        box = (
            [310 * s, 230 * s, 330 * s, 250 * s] if "white square" in messages[1].text() else [0, 0, w / 5, h]
        )
        return f'<tool_off><think>x</think><answer>{{"bbox_2d": {json.dumps(box)}}}</answer>'

    summary = asyncio.run(
        run_eval(
            _cfg(f"refcoco:{refcoco_parquet}"),
            tmp_path / "run",
            ScriptedModel(ground, name="scripted/policy"),
        )
    )
    rows = {r.question_id: r for r in load_results(tmp_path / "run")}
    assert rows["r0"].correct and (rows["r0"].score or 0) > 0.9
    assert not rows["r1"].correct and (rows["r1"].score or 0) == pytest.approx(0.4, abs=0.02)
    assert summary.headline["mean_iou"] > 0.6


def test_synthetic_dataset_and_forced_mode(tmp_path: Path) -> None:
    model = ScriptedModel(lambda m, c: "<think>x</think><answer>A</answer>", name="scripted/policy")
    cfg = AutoToolEvalConfig(
        model="scripted/policy",
        dataset="synthetic:3:320",
        agent_config={"force_mode": "tool_off", "max_turns": 2},
    )
    summary = asyncio.run(run_eval(cfg, tmp_path / "run", model))
    assert summary.overall.n == 3 and summary.overall.tool_on_share == 0.0
    assert all(req[0][1].text().rstrip().endswith("<tool_off>") for req in model.requests)


def _r(qid: str, answer: str | None, truth: str, correct: bool, sub: str = "") -> EpisodeResult:
    return EpisodeResult(
        question_id=qid, agent="autotool", answer=answer, ground_truth=truth, correct=correct, subcategory=sub
    )


def test_pope_metrics_literal() -> None:
    rows = [
        _r("1", "yes", "yes", True),
        _r("2", "yes", "no", False),
        _r("3", "no", "no", True),
        _r("4", "no", "yes", False),
        _r("5", None, "yes", False),
    ]
    m = pope_metrics(rows)
    assert m["accuracy"] == 0.4 and m["precision"] == 0.5 and m["recall"] == pytest.approx(1 / 3)
    assert m["f1"] == pytest.approx(0.4) and m["yes_ratio"] == 0.4


def test_cycle_accuracy_literal() -> None:
    rows = [
        _r("a", "x", "x", True, "single"),
        _r("b", "x", "y", False, "single"),
        _r("c", "x", "x", True, "cross"),
    ]
    cycles = {"a": "0", "b": "1", "c": "1"}
    m = cycle_accuracy(rows, cycles)
    # cycle 0: single 1.0, overall 1.0; cycle 1: single 0.0, cross 1.0, overall 0.5.
    assert m["cycle_avg_single"] == 0.5 and m["cycle_avg_cross"] == 0.5 and m["cycle_avg_overall"] == 0.75

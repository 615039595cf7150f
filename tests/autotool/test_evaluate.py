"""AutoTool benchmarks through the shared harness (``eval.runner`` with the ``autotool`` agent):
run directory, per-benchmark scoring, resumption, failures; and the metric helpers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from eviseek.autotool.metrics import cycle_accuracy, mode_costs, mode_shares, pope_metrics, summarize
from eviseek.cli.autotool import dataset_spec
from eviseek.errors import ConfigError
from eviseek.eval.benchmarks.autotool import parse_options
from eviseek.eval.config import new_run_config
from eviseek.eval.runner import EvalOutcome, run_eval
from eviseek.eval.scoring import rescore_run
from eviseek.eval.store import load_results
from eviseek.models import ScriptedModel
from eviseek.types import ChatMessage, EpisodeResult, GenerateConfig, Trajectory
from eviseek.types.plans import AutoToolPlan
from eviseek.types.question_file import read_questions

CALL = '<tool_call>{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [100, 80, 220, 160]}}</tool_call>'


@pytest.fixture(autouse=True)
def _image_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVISEEK_CACHE_DIR", str(tmp_path / "cache"))


def hrbench_policy(messages: Sequence[ChatMessage], config: GenerateConfig) -> str:
    """Zoom first on 'single' questions (sign 0), then pick 'cat'; answer 'dog' directly on sign 1."""
    options = config.metadata["options"]
    question = messages[1].text()
    if "sign 0" in question:
        if config.metadata["turn"] == 0:
            return f"<tool_on><think>small sign</think>{CALL}"
        return f"<think>a cat</think><answer>{'ABCD'[options.index('cat')]}</answer>"
    return f"<tool_off><think>clear</think><answer>{'ABCD'[options.index('dog')]}</answer>"


def _run(dataset: str, out: Path, model: ScriptedModel, **kw: Any) -> EvalOutcome:
    agent_config = {"max_pixels": 40_000, **kw.pop("agent_config", {})}
    cfg = new_run_config(
        agents=["autotool"], model="scripted/policy", dataset=dataset, agent_config=agent_config, **kw
    )
    return run_eval(cfg, out, model=model, progress=False)


def _summary(out: Path) -> Any:
    return summarize(load_results(out), read_questions(out), model="scripted/policy", dataset="")


def test_hrbench_run_directory_and_metrics(hrbench_tsv: Path, tmp_path: Path) -> None:
    model = ScriptedModel(hrbench_policy, name="scripted/policy")
    out = tmp_path / "run"
    outcome = _run(f"hrbench4k:{hrbench_tsv}", out, model, env_workers=0)
    assert outcome.ran == 8 and outcome.failed == 0
    summary = _summary(out)
    assert summary.kind == "hrbench" and summary.overall.n == 8 and summary.overall.accuracy == 0.5
    splits = {s.name: s for s in summary.splits}
    assert splits["single"].accuracy == 1.0 and splits["single"].tool_on_share == 1.0
    assert splits["single"].calls_per_episode == 1.0
    assert splits["cross"].accuracy == 0.0 and splits["cross"].tool_on_share == 0.0
    assert summary.headline["cycle_avg_single"] == 1.0 and summary.headline["cycle_avg_overall"] == 0.5
    assert summary.by_mode == {"tool_on": 1.0, "tool_off": 0.0}
    # The standard run directory of the shared harness.
    run = json.loads((out / "run.json").read_text())
    assert run["agents"] == ["autotool"] and run["agent_config"]["max_pixels"] == 40_000
    questions = read_questions(out)
    assert len(questions) == 8 and all(q.env_id == "eviseek/ImageZoom-v0" for q in questions)
    rows = load_results(out)
    assert len(rows) == 8 and all(r.agent == "autotool" for r in rows)
    traj = Trajectory.load(out / "episodes" / "autotool" / "0")
    assert traj.result is not None and traj.result.correct and traj.steps[0].feedback.success
    # The agent's max_pixels reached the environment: the shown image fits in 40,000 pixels.
    assert isinstance(traj.plan, AutoToolPlan) and traj.plan.shown_size is not None
    w, h = traj.plan.shown_size
    assert w * h <= 40_000 and traj.plan.original_size == (320, 240)
    # Offline re-scoring (eviseek score) gives the live verdicts.
    rescored = rescore_run(out)
    assert rescored.changed == [] and rescored.summary.agent("autotool").overall.correct == 4


def test_resume_skips_finished_questions_and_refuses_other_settings(
    hrbench_tsv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    first = ScriptedModel(hrbench_policy, name="scripted/policy")
    _run(f"hrbench4k:{hrbench_tsv}", out, first, limit=3, env_workers=0)
    assert len(first.requests) == 6  # three sign-0 questions: zoom, then answer
    again = ScriptedModel(hrbench_policy, name="scripted/policy")
    outcome = _run(f"hrbench4k:{hrbench_tsv}", out, again, limit=3, env_workers=0)
    assert len(again.requests) == 0 and outcome.skipped == 3
    with pytest.raises(ConfigError, match="seed"):
        _run(f"hrbench4k:{hrbench_tsv}", out, again, limit=3, seed=3, env_workers=0)


def test_failed_episodes_are_recorded_then_retried(pope_jsonl: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"

    def flaky(messages: Sequence[ChatMessage], config: GenerateConfig) -> str:
        if "thing 2" in messages[1].text():
            raise RuntimeError("server hiccup")
        return "<tool_off><think>x</think><answer>yes</answer>"

    outcome = _run(f"pope:{pope_jsonl}", out, ScriptedModel(flaky, name="scripted/policy"), env_workers=0)
    assert outcome.failed == 1
    failed = [r for r in load_results(out) if r.error]
    assert len(failed) == 1 and "server hiccup" in (failed[0].error or "")
    steady = ScriptedModel(["<tool_off><think>x</think><answer>yes</answer>"], name="scripted/policy")
    cfg = new_run_config(
        agents=["autotool"],
        model="scripted/policy",
        dataset=f"pope:{pope_jsonl}",
        agent_config={"max_pixels": 40_000},
        env_workers=0,
    )
    outcome = run_eval(cfg, out, model=steady, progress=False, retry_failed=True)
    assert outcome.ran == 1 and outcome.failed == 0 and steady.remaining == 0
    # Always "yes": 3 of 6 right, precision 0.5, recall 1, yes-ratio 1.
    h = _summary(out).headline
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

    out = tmp_path / "run"
    _run(f"refcoco:{refcoco_parquet}", out, ScriptedModel(ground, name="scripted/policy"))  # worker processes
    rows = {r.question_id: r for r in load_results(out)}
    assert {r.family for r in rows.values()} == {"refcoco"}  # the benchmark's name, not "grounding"
    assert rows["r0"].correct and (rows["r0"].score or 0) > 0.9
    assert not rows["r1"].correct and (rows["r1"].score or 0) == pytest.approx(0.4, abs=0.02)
    assert _summary(out).headline["mean_iou"] > 0.6
    # Re-scoring maps the box from the saved <answer> text again, not the already mapped one.
    assert rescore_run(out).changed == []


def test_synthetic_dataset_forced_mode_and_no_answer(tmp_path: Path) -> None:
    model = ScriptedModel(lambda m, c: "<think>x</think><answer>A</answer>", name="scripted/policy")
    out = tmp_path / "run"
    _run(
        "synthetic:3:320", out, model, agent_config={"force_mode": "tool_off", "max_turns": 2}, env_workers=0
    )
    summary = _summary(out)
    assert summary.overall.n == 3 and summary.overall.tool_on_share == 0.0
    assert all(req[0][1].text().rstrip().endswith("<tool_off>") for req in model.requests)
    # A model that never answers gives wrong answers, not failed episodes.
    silent = ScriptedModel(lambda m, c: "<tool_off><think>hmm</think>", name="scripted/policy")
    outcome = _run("synthetic:2:320", tmp_path / "silent", silent, agent_config={"max_turns": 2})
    assert outcome.failed == 0
    assert all(r.correct is False and r.error is None for r in load_results(tmp_path / "silent"))


def test_dataset_spec_options(vstar_dir: Path, tmp_path: Path) -> None:
    assert dataset_spec("vstar:/d", seed=0, vstar_shuffle=True) == "vstar:/d"
    assert dataset_spec("vstar:/d", seed=3, vstar_shuffle=False) == "vstar:/d?shuffle=off&seed=3"
    assert dataset_spec("synthetic:4", seed=2, vstar_shuffle=True) == "synthetic:4?seed=2"
    assert dataset_spec("pope:/p", seed=2, vstar_shuffle=False) == "pope:/p"
    assert parse_options("vstar", "/d?shuffle=off&seed=3") == ("/d", 3, False)
    with pytest.raises(ConfigError, match="shuffle=on"):
        parse_options("pope", "/p?shuffle=off")
    from eviseek.eval.datasets import load_dataset

    shuffled = load_dataset(f"vstar:{vstar_dir}")
    plain = load_dataset(f"vstar:{vstar_dir}?shuffle=off")
    assert all(q.ground_truth == q.contract.options[0] for q in plain)  # type: ignore[index]
    assert any(q.ground_truth != q.contract.options[0] for q in shuffled)  # type: ignore[index]
    assert all(q.metadata["scorer"] == "autotool" and q.metadata["autotool_kind"] == "vstar" for q in plain)


def _r(qid: str, answer: str | None, truth: str, correct: bool, sub: str = "", **kw: Any) -> EpisodeResult:
    return EpisodeResult(
        question_id=qid,
        agent="autotool",
        answer=answer,
        ground_truth=truth,
        correct=correct,
        subcategory=sub,
        **kw,
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


def test_mode_shares_and_costs_literal() -> None:
    rows = [
        _r(
            "1",
            "a",
            "a",
            True,
            family="vstar",
            mode="tool_on",
            calls=3,
            steps=2,
            input_tokens=300,
            wall_time_s=3.0,
        ),
        _r("2", "a", "b", False, family="vstar", mode="tool_off", calls=1, input_tokens=100, wall_time_s=1.0),
        _r("3", "a", "a", True, family="pope", mode="tool_off", calls=1, input_tokens=120, wall_time_s=2.0),
        _r("4", None, "a", False, family="pope", error="server down"),  # failed: no mode, not counted
    ]
    shares = {s.benchmark: s for s in mode_shares(rows)}
    assert (shares["vstar"].tool_on, shares["vstar"].tool_off) == (0.5, 0.5)
    assert (shares["pope"].n, shares["pope"].tool_off) == (1, 1.0)
    assert shares["all"].n == 3 and shares["all"].tool_on == pytest.approx(1 / 3)
    costs = {c.mode: c for c in mode_costs(rows)}
    assert (costs["tool_on"].calls, costs["tool_on"].zoom_steps, costs["tool_on"].latency_s) == (
        3.0,
        2.0,
        3.0,
    )
    assert costs["tool_off"].input_tokens == 110.0 and costs["tool_off"].accuracy == 0.5
    assert costs["all"].n == 3 and costs["all"].input_tokens == pytest.approx(520 / 3)

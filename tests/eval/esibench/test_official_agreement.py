"""eviseek's ESI-Bench rules against ESI-Bench's own functions, on every public record.

Runs when ``ESI_BENCH_ROOT`` points at a checkout (``scripts/check_esibench.sh``); the official
modules are imported from it at run time (see ``official.py``), never copied.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eviseek.answers.esibench import ESIRule, esibench_final_answer, esibench_score, esibench_verdict
from eviseek.eval.esibench import iter_records, load_with_exclusions
from eviseek.eval.esibench.dataset import LoadOptions, count_subcategories
from tests.eval.esibench.official import esibench_root, load_official
from tests.eval.esibench.predictions import odd_predictions

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def official() -> tuple[Any, dict[str, Any], Path]:
    root = esibench_root()
    pipeline, tasks = load_official(root)
    return pipeline, tasks, root


def _official_state(pipeline: Any, module: Any, payload: dict[str, Any], source: Path) -> tuple[dict, dict]:
    camera_info: dict[str, Any] = {}
    if module.TASK_NAME == "action":
        camera_info = module.initial_camera(payload)[2]
    state = (
        pipeline.call_with_supported_args(module.preprocess, payload, source_json=source, config=None)
        if hasattr(module, "preprocess")
        else {}
    )
    return camera_info, state or {}


def test_every_record_scores_as_officially(official: tuple[Any, dict[str, Any], Path]) -> None:
    pipeline, tasks, root = official
    checked = mismatches = 0
    examples: list[str] = []
    questions, dropped = load_with_exclusions(root, LoadOptions(images="skip", all=True))
    by_id = {q.metadata["esibench"]["id"]: q for q in questions + dropped}
    for record in iter_records(root):
        row = json.loads(Path(record.source).read_text(encoding="utf-8"))
        payload = pipeline.payload_from_hf_row(row)
        module = tasks[record.runner_task]
        camera_info, state = _official_state(pipeline, module, payload, Path(record.source))
        rule = ESIRule.model_validate(by_id[record.id].metadata["esibench"]["rule"])
        for raw in odd_predictions(row):
            reply = {"answer": raw, "action": "stop", "confidence": 1.0, "reasoning": "r"}
            kept = pipeline.task_parse_model_output(module, reply, payload, state)["answer"]
            theirs = pipeline.task_score(module, payload, {"answer": kept}, camera_info, state)
            direct = (
                pipeline.task_score(module, payload, {"answer": raw}, camera_info, state)
                if raw is None or isinstance(raw, str)
                else None
            )
            ours = esibench_score(rule, raw)
            ours_direct = esibench_verdict(rule, raw)
            checked += 1
            same = (
                esibench_final_answer(rule, raw) == kept
                and ours.correct == theirs.get("correct")
                and ours.soft_score == theirs.get("soft_score")
            )
            if direct is not None:
                same = same and ours_direct.correct == direct.get("correct")
            if not same:
                mismatches += 1
                if len(examples) < 15:
                    examples.append(
                        f"{record.source} {raw!r}: ours {esibench_final_answer(rule, raw)!r} "
                        f"{ours.correct}/{ours_direct.correct} theirs {kept!r} "
                        f"{theirs.get('correct')}/{(direct or {}).get('correct')}"
                    )
    print(f"compared {checked} predictions over the public records")
    assert mismatches == 0, f"{mismatches} of {checked} disagree, e.g.:\n" + "\n".join(examples)
    assert checked > 100_000


def test_the_truth_scores_correct_on_every_evaluated_record(
    official: tuple[Any, dict[str, Any], Path],
) -> None:
    _, _, root = official
    questions, _ = load_with_exclusions(root, LoadOptions(images="skip"))
    from eviseek.answers import score_answer

    wrong = [q.id for q in questions if not score_answer(q, _truth_text(q)).correct]
    assert not wrong, f"{len(wrong)} questions do not accept their own ground truth: {wrong[:10]}"


def _truth_text(question: Any) -> str:
    truth = question.ground_truth
    return str(truth[0] if isinstance(truth, list) else truth)


def test_exclusions_match_the_official_preprocess(official: tuple[Any, dict[str, Any], Path]) -> None:
    pipeline, tasks, root = official
    questions, dropped = load_with_exclusions(root, LoadOptions(images="skip"))
    ours = {q.metadata["esibench"]["id"]: q.metadata["esibench"]["excluded"] for q in dropped}
    theirs = {}
    for record in iter_records(root):
        row = json.loads(Path(record.source).read_text(encoding="utf-8"))
        payload = pipeline.payload_from_hf_row(row)
        module = tasks[record.runner_task]
        state = _official_state(pipeline, module, payload, Path(record.source))[1]
        if state.get("skip_reason"):
            theirs[record.id] = state["skip_reason"]
    official_ours = {k for k, v in ours.items() if v.startswith("official:")}
    assert official_ours == set(theirs), (sorted(official_ours ^ set(theirs)))[:10]
    assert len(theirs) == 63
    assert len(questions) == 3502 - 64


def test_stats_match_the_paper_except_two_unidentified(official: tuple[Any, dict[str, Any], Path]) -> None:
    _, _, root = official
    rows = count_subcategories(root)
    assert len(rows) == 29 and len({r.family for r in rows}) == 10
    assert sum(r.records for r in rows) == 3502
    off = {f"{r.family}/{r.subcategory}": (r.questions, r.paper) for r in rows if r.questions != r.paper}
    assert off == {"Temporal Understanding/Unobserved Change": (144, 142)}
    assert sum(r.paper or 0 for r in rows) == 3436

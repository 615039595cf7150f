"""The dialect test: replies in each form a real VLM writes, through every agent, scored by eviseek
and by the task's own functions on the same raw reply after the same forced choice.

Forms: the option text, the option text with a trailing sentence, the letter where the task
letters its options, "not sure", and the answer inside a JSON object and a fenced JSON object
(the whole completion, as a model writes it). For each, the agent's recorded raw answer goes
through the task's ``parse_model_output``, ``resolve_final_answer``, ``needs_force_final_choice``
(the forced reply, the correct answer, read by ``parse_model_output`` again) and ``score``;
eviseek's verdict (``esibench:official``, the rule set that claims the code's verdicts) and
whether it asked a forced choice must equal theirs. With ``ESI_BENCH_ROOT``, one question of each
of the 19 task modules; without it, the fixture questions against eviseek's own reading of the
task rules (a check of the agents' plumbing only).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from eviseek.agents import make_agent
from eviseek.answers import score_answer
from eviseek.answers.accept import esibench_rule
from eviseek.answers.esibench import OFFICIAL_RULES, esibench_accepted, esibench_final_answer
from eviseek.envs import as_async
from eviseek.eval.esibench.dataset import LoadOptions, load_with_exclusions
from eviseek.types import Question
from tests.agents.gridworld import GridWorld
from tests.agents.scripts import StageScript
from tests.eval.esibench.invited import invited_answer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "esibench"
AGENTS = ("passive:paper", "blind", "single-model", "eviseek:paper")


def forms(q: Question) -> dict[str, str]:
    """The completions of the answer call, one per form (the correct answer in each)."""
    rule = esibench_rule(q)
    assert rule is not None
    said = invited_answer(q)
    text = said
    if rule.task in ("angle_confusion", "occlusion"):
        text = next(display for _, category, display in rule.choices if category == rule.truth)
    if rule.task == "deformable":
        text = next(t for option_id, t in rule.choices if option_id == rule.truth)
    out = {
        "text": json.dumps({"answer": text, "reasoning": "seen", "confidence": 0.9}),
        "text+sentence": json.dumps(
            {"answer": f"{text}. That is what the views show.", "reasoning": "seen", "confidence": 0.9}
        ),
        "not sure": json.dumps({"answer": "not sure", "reasoning": "unclear", "confidence": 0.9}),
        "json object": json.dumps({"answer": said, "reasoning": "seen", "confidence": 0.9}),
        "fenced json": "```json\n" + json.dumps({"answer": said, "confidence": 0.9}) + "\n```",
    }
    if said != text:
        out["letter"] = json.dumps({"answer": said, "reasoning": "seen", "confidence": 0.9})
    return out


def run(agent: str, q: Question, completion: str) -> tuple[str | None, bool, bool]:
    """The raw answer ``agent`` records when its answer call gets ``completion`` (a forced choice
    gets the correct answer), and whether it asked a forced choice."""
    reply = json.loads(completion.strip("`").removeprefix("json")) if completion.startswith("```") else None
    stop = {**(reply or json.loads(completion)), "action": "stop"}
    forced = [{"answer": invited_answer(q)}]
    script = StageScript(
        passive=[completion],
        blind=[completion],
        single_step=["```json\n" + json.dumps(stop) + "\n```" if reply else json.dumps(stop)],
        demands=[{"demands": [{"text": "what the view shows"}]}],
        plan=[{"subtasks": [{"goal": "look", "demand": 1}]}],
        seek=[{"intent": "DONE"}],
        curate=lambda cfg: {"frames": []},
        answer=[completion],
        forced_choice=forced,
    )
    made = make_agent(agent, min_steps=0) if agent == "single-model" else make_agent(agent)
    traj = asyncio.run(made.run(as_async(GridWorld()), q, script.model()))
    assert traj.result is not None
    asked = bool(script.calls("forced_choice"))
    # Passive has no forced choice: an answer the task would force on is recorded as no answer.
    return traj.result.raw_answer, asked, asked or traj.result.answer is None


def _eviseek_rules_verdict(q: Question, raw: str | None, force: bool) -> tuple[bool, bool]:
    """Forced or not, and the verdict (after the forced choice where ``force``), by eviseek's own
    reading of the task rules."""
    rule = esibench_rule(q)
    assert rule is not None
    needs = esibench_accepted(rule, raw) is None
    final = invited_answer(q) if needs and force else raw
    return needs, score_answer(q, final, rules=OFFICIAL_RULES).correct


def _mismatches(questions: list[Question], official: Any) -> list[tuple[str, str, str, Any, Any]]:
    wrong = []
    for q in questions:
        for name, completion in forms(q).items():
            for agent in AGENTS:
                raw, asked, needs = run(agent, q, completion)
                first_raw = raw if not asked else _first_raw(q, completion)
                theirs = official(q, first_raw, asked)
                ours = (needs, score_answer(q, raw, rules=OFFICIAL_RULES).correct)
                if ours != theirs:
                    wrong.append((q.metadata["esibench"]["task"], name, agent, ours, theirs))
    return wrong


def _first_raw(q: Question, completion: str) -> str:
    text = completion.strip().strip("`").removeprefix("json").strip()
    return str(json.loads(text)["answer"])


def test_every_form_on_the_fixture_questions_through_every_agent() -> None:
    kept, _ = load_with_exclusions(FIXTURES, LoadOptions(images="skip", tasktext="off"))
    one: dict[str, Question] = {}
    for q in kept:
        one.setdefault(q.metadata["esibench"]["task"], q)
    assert _mismatches(list(one.values()), _eviseek_rules_verdict) == []


def test_every_form_on_each_real_task_module_through_every_agent() -> None:
    from eviseek.envs.esibench.checkout import runner_config
    from eviseek.envs.esibench.offline import load_offline
    from eviseek.eval.esibench.records import ROW_FIELDS, iter_records
    from tests.eval.esibench.official import esibench_root

    root = esibench_root()
    pipeline, tasks = load_offline(root)
    kept, _ = load_with_exclusions(root, LoadOptions(images="skip", tasktext="off"))
    one: dict[str, Question] = {}
    for q in kept:
        one.setdefault(q.metadata["esibench"]["task"], q)
    assert len(one) == 19
    records = {r.id: r for r in iter_records(root) if f"esibench-{r.id}" in {q.id for q in one.values()}}

    def official(q: Question, raw: str | None, force: bool) -> tuple[bool, bool]:
        record = records[q.metadata["esibench"]["id"]]
        task = record.runner_task
        module = tasks[task]
        payload = pipeline.payload_from_hf_row({k: getattr(record, k) for k in ROW_FIELDS})
        camera = dict(module.initial_camera(payload)[2] or {}) if hasattr(module, "initial_camera") else {}
        config = runner_config(pipeline, task, Path(record.source), threshold=0.8, min_steps=0)
        state = pipeline.task_preprocess(module, payload, Path(record.source), config) or {}
        reply = {"action": "stop", "answer": raw, "confidence": 0.9, "reasoning": "seen"}
        parsed = pipeline.task_parse_model_output(module, reply, payload, state)
        final, _ = pipeline.task_resolve_final_answer(module, [{**parsed, "step": 1}])
        asked = bool(pipeline.task_needs_force_final_choice(module, final, "model_stop"))
        if asked and force:
            forced = {"answer": invited_answer(q), "confidence": 0.9, "reasoning": "best"}
            final = pipeline.task_parse_model_output(module, forced, payload, state).get("answer", "not sure")
        scored = pipeline.task_score(module, payload, {"answer": final}, camera, state)
        return asked, scored.get("correct") is True

    assert _mismatches(list(one.values()), official) == []


def test_final_answer_reader_is_what_the_forms_exercise() -> None:
    # A guard that the forms differ where they should: a letter is kept only where the task letters.
    kept, _ = load_with_exclusions(FIXTURES, LoadOptions(images="skip", tasktext="off"))
    lettered = [q for q in kept if "letter" in forms(q)]
    assert lettered
    for q in lettered:
        rule = esibench_rule(q)
        assert rule is not None and esibench_final_answer(rule, invited_answer(q)) not in ("", None)

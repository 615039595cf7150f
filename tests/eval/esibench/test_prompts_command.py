"""``eviseek esibench prompts``: each agent's first request on a question, without a simulator.
With ``ESI_BENCH_ROOT``: for one question of each of the 19 task modules, EviSeek's and
Single-model's first prompts carry the task's own advice and action names."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.eval.esibench import iter_records
from eviseek.eval.esibench.dataset import LoadOptions, load_with_exclusions
from eviseek.eval.esibench.prompts import first_request
from eviseek.types.taxonomy import TASK_MODULES
from tests.eval.esibench.official import esibench_root


def test_first_prompts_of_every_task_module_carry_its_text_and_actions() -> None:
    root = esibench_root()
    kept, _ = load_with_exclusions(root, LoadOptions(images="skip", tasktext="require"))
    one = {}
    for q in kept:
        one.setdefault(q.metadata["esibench"]["task"], q)
    assert set(one) == set(TASK_MODULES)
    for task, q in sorted(one.items()):
        text = q.metadata["esibench"]["task_text"]
        advice = text["guidance"].splitlines()[0]
        for spec in ("single-model", "eviseek:paper"):
            req = first_request(q, spec)
            assert req.error is None and req.messages, (task, spec, req.error)
            body = "\n".join(m.text for m in req.messages)
            assert advice in body, (task, spec)
            for action in text["actions"]:
                assert action["name"] in body, (task, spec, action["name"])
                assert (
                    action["name"] + ("(" if action["params"] else "") in " ".join(req.offered_actions) + " "
                )
            assert req.hooks["system_prompt"].startswith(f"tasks/{task}.py:build_system_prompt")


def test_the_command_prints_the_requests() -> None:
    root = esibench_root()
    record = next(r for r in iter_records(root) if r.runner_task == "pour")
    res = CliRunner().invoke(app, ["esibench", "prompts", str(root), "--id", record.id, "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert [r["agent"] for r in got] == ["passive:paper", "single-model", "eviseek:paper"]
    assert got[1]["stage"] and "fill_water_in(object)" in got[1]["offered_actions"]
    plain = CliRunner().invoke(
        app, ["esibench", "prompts", str(root), "--id", record.id, "--agent", "eviseek:paper"]
    )
    assert plain.exit_code == 0 and "=== eviseek:paper: first request (stage demands) ===" in plain.stdout
    assert "tasks/pour.py:build_system_prompt" in plain.stdout


def test_a_path_without_task_modules_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.eval.esibench.conftest import FIXTURES

    monkeypatch.delenv("ESI_BENCH_ROOT", raising=False)
    res = CliRunner().invoke(app, ["esibench", "prompts", str(FIXTURES), "--id", "1"])
    assert res.exit_code == 1 and "no ESI-Bench checkout" in res.output

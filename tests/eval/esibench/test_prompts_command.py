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


@pytest.fixture
def standin_tree(tmp_path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A stand-in checkout holding the fixture records, one stand-in module per task name, and a
    private cache folder."""
    import shutil

    from tests.envs.esibench.conftest import forget_standin, standin_checkout
    from tests.envs.esibench.standin.pipeline import TASK_NAMES
    from tests.eval.esibench.conftest import FIXTURES

    forget_standin()
    root = standin_checkout(tmp_path)
    shutil.copytree(FIXTURES / "dataset", root / "dataset")
    for name in TASK_NAMES:
        (root / "src" / "active_explore" / "tasks" / f"{name}.py").write_text(
            f"from tasks.standin import *  # noqa: F403\nTASK_NAME = {name!r}\n"
        )
    monkeypatch.setenv("EVISEEK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ESI_BENCH_ROOT", raising=False)
    yield root
    forget_standin()


def _prompts(root, qid: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["esibench", "prompts", str(root), "--id", qid, "--agent", "single-model"])


def test_ids_in_each_form_and_a_rendering_kept_for_the_checkout(standin_tree, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    first = _prompts(standin_tree, "9014")
    assert first.exit_code == 0, first.output
    assert "question esibench-9014" in first.stdout and "STANDIN ADVICE for touching" in first.stdout
    kept = list((tmp_path / "cache" / "esibench-tasktext").rglob("*.json"))
    assert len(kept) == 1
    # The second call reads the rendering back and imports nothing of the checkout.
    import eviseek.envs.esibench.offline as offline

    def no_import(root):  # type: ignore[no-untyped-def]
        raise AssertionError("the checkout was imported again")

    monkeypatch.setattr(offline, "load_offline", no_import)
    for qid in ("esibench-9014", "09014"):
        again = _prompts(standin_tree, qid)
        assert again.exit_code == 0 and again.stdout == first.stdout, again.output
    # A changed runner file is a new checkout state: rendered again.
    monkeypatch.undo()
    monkeypatch.setenv("EVISEEK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ESI_BENCH_ROOT", raising=False)
    with (standin_tree / "src" / "active_explore" / "pipeline.py").open("a") as fh:
        fh.write("\n# changed\n")
    assert _prompts(standin_tree, "9014").exit_code == 0
    assert len(list((tmp_path / "cache" / "esibench-tasktext").rglob("*.json"))) == 2


def test_bad_input_is_one_line(standin_tree, tmp_path) -> None:  # type: ignore[no-untyped-def]
    wrong = _prompts(standin_tree, "77777")
    assert wrong.exit_code == 2 and wrong.output.count("\n") == 1, wrong.output
    assert wrong.output.startswith("error: no ESI-Bench question '77777'") and "0123" in wrong.output
    missing = _prompts(tmp_path / "nowhere", "9014")
    assert missing.exit_code == 1 and missing.output.count("\n") == 1, missing.output
    bad = next((standin_tree / "dataset" / "json_clean").rglob("*.json"))
    bad.write_text("{not json")
    corrupt = _prompts(standin_tree, "9014")
    assert corrupt.exit_code == 1 and corrupt.output.count("\n") == 1, corrupt.output
    assert "not a readable JSON record" in corrupt.output

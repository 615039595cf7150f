"""The worked examples of docs/architecture.md ("add a provider", "add an agent") are real
modules: each is one module plus one registration, and a run through ``eviseek eval --plugin``
uses it."""

from __future__ import annotations

import json
import re
import shlex
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.types import Trajectory
from eviseek.types.rundir import RunDir

ROOT = Path(__file__).resolve().parents[2]
PROVIDER = ROOT / "examples" / "plugins" / "fixed_reply.py"
AGENT = ROOT / "examples" / "plugins" / "look_around.py"


def _trajectories(run: Path) -> list[Trajectory]:
    return [Trajectory.model_validate_json(p.read_text()) for p in RunDir(run).trajectory_files()]


def test_the_page_shows_the_tested_modules_each_with_one_registration() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for module, call in ((PROVIDER, "register_provider("), (AGENT, "register_agent(")):
        assert f'--8<-- "{module.relative_to(ROOT)}"' in page
        assert len(re.findall(r"^register_\w+\(", module.read_text(), re.M)) == 1
        assert module.read_text().count(call) == 1


def test_the_provider_example_runs_with_checked_settings(tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = ["eval", "--plugin", str(PROVIDER), "--model", "fixed/yes", "--agents", "passive"]
    args += ["--dataset", "tabletop:dev", "--limit", "1", "--no-progress", "--out", str(run)]
    done = CliRunner().invoke(app, [*args, "--model-arg", "reply=no"])
    assert done.exit_code == 0, done.output
    (traj,) = _trajectories(run)
    assert traj.model == "fixed/yes" and traj.result is not None and traj.result.raw_answer == "no"
    assert json.loads((run / "run.json").read_text())["model_args"] == {"reply": "no"}
    bad = CliRunner().invoke(app, [*args[:-1], str(tmp_path / "bad"), "--model-arg", "replly=no"])
    # A bad setting is a bad value: exit 2, checked before the run folder exists (issue 36).
    assert bad.exit_code == 2
    assert "fixed/yes: unknown setting(s) replly; known: delay_s, reply" in bad.output
    assert not (tmp_path / "bad").exists()


def test_the_agent_example_runs_through_the_env_protocol(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = CliRunner().invoke(
        app,
        ["eval", "--plugin", str(AGENT), "--agents", "look-around:turns=2", "--model", "reference",
         "--dataset", "tabletop:dev", "--limit", "1", "--no-progress", "--out", str(run)],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    (traj,) = _trajectories(run)
    assert traj.agent == "look-around:turns=2" and [s.action.name for s in traj.steps] == ["turn_left"] * 2
    assert [s.index for s in traj.steps] == [1, 2] and all(s.image is not None for s in traj.steps)
    assert len(traj.calls) == 1 and traj.result is not None and traj.result.answer is not None


REMOTE = ROOT / "examples" / "plugins" / "plain_chat.py"
PLUGIN_PATH = REMOTE.relative_to(ROOT).as_posix()


def test_the_remote_provider_example_is_short_and_shown() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert f'--8<-- "{REMOTE.relative_to(ROOT)}"' in page
    assert len(REMOTE.read_text().splitlines()) < 80
    assert REMOTE.read_text().count("register_provider(") == 1


def test_the_remote_provider_example_runs_as_printed_and_inherits_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The doc's command, pointed at a real server on 127.0.0.1 that fails the first episode
    request with a 500 and then a 429: the plugin's model, which writes no retry code, retries
    both and the run finishes."""
    from eviseek.testing.openai_server import OpenAITestServer, ServerReply

    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = f"eviseek eval --plugin {PLUGIN_PATH}"
    (command,) = [line for line in page.splitlines() if line.startswith(start)]
    lock, seen = threading.Lock(), []

    def answer(request: dict) -> str | ServerReply:
        if "Reply with the word OK." in json.dumps(request):
            return "OK"  # eval's server check before the first episode
        with lock:
            seen.append(request)
            n = len(seen)
        if n == 1:
            return ServerReply.error(500, "a passing fault")
        if n == 2:
            return ServerReply.error(429, "slow down", headers={"Retry-After": "0"})
        return '{"answer": "yes", "reasoning": "a fixed reply from the test server"}'

    monkeypatch.chdir(ROOT)  # the printed command names the plugin relative to the repository
    with OpenAITestServer(answer) as server:
        args = shlex.split(command)[1:]
        args[args.index("--base-url") + 1] = server.base_url
        args[args.index("--out") + 1] = str(tmp_path / "run")
        done = CliRunner().invoke(app, [*args, "--no-progress"])
        assert done.exit_code == 0, done.output
        assert {r["json"]["model"] for r in server.requests} == {"my-vlm"}
        keys = {v for r in server.requests for k, v in r["headers"].items() if k.lower() == "authorization"}
        assert keys == {"Bearer EMPTY"}, keys
    trajectories = _trajectories(tmp_path / "run")
    assert len(trajectories) == 2
    assert all(t.result is not None and t.result.error is None for t in trajectories)
    notes = [n for t in trajectories for c in t.calls for n in c.notes]
    # The two faults hit one episode twice or two episodes once each (they run concurrently).
    retried = [int(m.group(1)) for n in notes if (m := re.match(r"succeeded after (\d+) retr", n))]
    assert sum(retried) == 2, notes
    assert len(seen) == 4  # two failures, then one request per episode

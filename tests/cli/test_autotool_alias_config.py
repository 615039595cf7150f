"""`eviseek autotool eval` builds the run `eviseek eval --agents autotool` builds from the matching
flags, so either command resumes the other's run; a run the alias started before issue 26 (every
flag written out, budget = --max-turns) still resumes under the alias."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eviseek.agents.autotool import AutoToolConfig
from eviseek.cli import autotool as alias
from eviseek.cli.main import app
from eviseek.testing.openai_server import OpenAITestServer
from eviseek.types.image import SHOWN_MAX_PIXELS
from tests.cli.test_autotool_cli import _reply

COMMON = ["--model", "openai/test-vlm", "--dataset", "synthetic:3:640", "--limit", "2", "--no-progress"]


@pytest.fixture(autouse=True)
def _image_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVISEEK_CACHE_DIR", str(tmp_path / "cache"))


def _reply_or_ok(request: dict[str, Any]) -> str:
    if not any(isinstance(m["content"], list) for m in request["messages"]):
        return "OK"  # the model check before the run
    return _reply(request)


def _run(server: OpenAITestServer, *args: str) -> Any:
    result = CliRunner().invoke(app, [*args, *COMMON, "--base-url", server.base_url])
    return result


def _config(run: Path) -> dict[str, Any]:
    saved = json.loads((run / "run.json").read_text())
    saved.pop("created_at")
    return dict(saved)


def test_the_alias_quotes_the_agents_own_defaults() -> None:
    assert alias.SHOWN_MAX_PIXELS == SHOWN_MAX_PIXELS == AutoToolConfig().max_pixels
    flags = alias.AliasFlags(model="openai/m", dataset="synthetic:1")
    defaults = AutoToolConfig()
    for name in ("max_turns", "force_how", "temperature", "max_tokens", "max_pixels"):
        assert getattr(flags, name) == getattr(defaults, name), name


@pytest.mark.parametrize(
    ("alias_flags", "eval_flags"),
    [
        ([], []),
        (
            ["--force-mode", "tool_on", "--max-turns", "3", "--seed", "2", "--max-pixels", "2000000",
             "--image-format", "jpeg", "--timeout", "30", "--temperature", "0.5"],
            ["--agent-arg", "force_mode=tool_on", "--agent-arg", "max_turns=3", "--agent-arg", "seed=2",
             "--agent-arg", "max_pixels=2000000", "--agent-arg", "temperature=0.5", "--seed", "2",
             "--model-arg", "max_pixels=2000000", "--model-arg", "image_format=jpeg",
             "--model-arg", "timeout_s=30", "--dataset", "synthetic:3:640?seed=2"],
        ),
    ],
    ids=["defaults", "every-flag"],
)  # fmt: skip
def test_alias_and_eval_build_the_same_run_and_resume_each_other(
    tmp_path: Path, alias_flags: list[str], eval_flags: list[str]
) -> None:
    with OpenAITestServer(_reply_or_ok) as server:
        by_alias, by_eval = tmp_path / "alias", tmp_path / "eval"
        first = _run(server, "autotool", "eval", "--out", str(by_alias), *alias_flags)
        assert first.exit_code == 0, first.output
        # The general command's --dataset, given last, overrides COMMON's where the seed changes it.
        second = CliRunner().invoke(
            app,
            ["eval", "--agents", "autotool", *COMMON, "--base-url", server.base_url, "--out", str(by_eval),
             *eval_flags],
        )  # fmt: skip
        assert second.exit_code == 0, second.output
        assert _config(by_alias) == _config(by_eval)
        # Each command resumes the other's run: nothing runs again.
        crossed = _run(server, "autotool", "eval", "--out", str(by_eval), *alias_flags)
        assert crossed.exit_code == 0 and "0 episode(s) run, 2 already finished" in crossed.output
        back = CliRunner().invoke(
            app,
            ["eval", "--agents", "autotool", *COMMON, "--base-url", server.base_url, "--out", str(by_alias),
             *eval_flags],
        )  # fmt: skip
        assert back.exit_code == 0 and "0 episode(s) run, 2 already finished" in back.output


def test_a_run_the_alias_started_before_issue_26_resumes_as_it_began(tmp_path: Path) -> None:
    run = tmp_path / "old"
    flags = ["--max-pixels", "100000", "--image-format", "jpeg", "--timeout", "30", "--concurrency", "1"]
    with OpenAITestServer(_reply_or_ok) as server:
        made = _run(server, "autotool", "eval", "--out", str(run), *flags)
        assert made.exit_code == 0, made.output
        # What the alias wrote for these flags before issue 26 (its run.json, as recorded then),
        # with no episode finished yet: the resume has to run both with the old settings.
        old = json.loads((run / "run.json").read_text())
        old.update(
            agent_config={"max_turns": 5, "force_mode": None, "force_how": "token", "max_pixels": 100000,
                          "temperature": 0.0, "max_tokens": 2048, "seed": 0},
            model_args={"max_pixels": 100000, "image_format": "jpeg", "timeout_s": 30.0},
            budget=5,
        )  # fmt: skip
        (run / "run.json").write_text(json.dumps(old, indent=2))
        for path in [run / "results.sqlite", *run.glob("episodes/autotool/*/trajectory.json")]:
            path.unlink()
        resumed = _run(server, "autotool", "eval", "--out", str(run), *flags)
        assert resumed.exit_code == 0, resumed.output
        assert "2 episode(s) run, 0 already finished, 0 failed" in resumed.output
        kept = _config(run)
        assert (
            kept["budget"] == 5
            and kept["agent_config"]["seed"] == 0
            and kept["model_args"] == old["model_args"]
        )
        # The episodes ran with the old settings: every request carried the sampling seed 0.
        asked = [
            r for r in server.chat_requests if any(isinstance(m["content"], list) for m in r["messages"])
        ]
        assert asked and all(r.get("seed") == 0 for r in asked[-4:])
        # The general command's form of the same flags is a different run: refused by name.
        other = CliRunner().invoke(
            app, ["eval", "--agents", "autotool", *COMMON, "--base-url", server.base_url, "--out", str(run)]
        )
        assert other.exit_code == 1 and "budget: the run directory has 5" in other.output

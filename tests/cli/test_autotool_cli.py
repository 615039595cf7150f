"""`eviseek autotool eval` and `eviseek eval --agents autotool` end to end against a real local
OpenAI-compatible server: failed episodes (exit 3), resume after a partial run and after a kill,
trajectory recovery, and the report's AutoTool section."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.testing.openai_server import OpenAITestServer, ServerReply

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(autouse=True)
def _image_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVISEEK_CACHE_DIR", str(tmp_path / "cache"))


def _image_key(request: dict[str, Any]) -> str | None:
    """The first image of the request (the question's shown image), or None (the model check)."""
    for m in request["messages"]:
        if isinstance(m["content"], list):
            for p in m["content"]:
                if p["type"] == "image_url":
                    return str(p["image_url"]["url"])[-64:]
    return None


def _reply(request: dict[str, Any]) -> str:
    # Zoom once, then answer.
    assistant_turns = [m for m in request["messages"] if m["role"] == "assistant"]
    if not assistant_turns:
        return (
            '<tool_on><think>small</think><tool_call>{"name": "image_zoom_in_tool", '
            '"arguments": {"bbox_2d": [10, 10, 200, 150]}}</tool_call>'
        )
    return "<think>seen</think><answer>A</answer>"


class Script:
    """Answers the model check, zooms then answers; the question seen ``fail_at``-th (0-based)
    gets HTTP 400 while ``broken``."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.order: list[str] = []
        self.fail_at = fail_at
        self.broken = fail_at is not None
        self.hold: threading.Event | None = None
        self.held = threading.Event()

    def __call__(self, request: dict[str, Any]) -> str | ServerReply:
        key = _image_key(request)
        if key is None:
            return "OK"
        if key not in self.order:
            self.order.append(key)
        index = self.order.index(key)
        if self.broken and index == self.fail_at:
            return ServerReply.error(400, "the prompt is longer than the context window")
        if self.hold is not None and index == 2:
            self.held.set()  # the test kills the run while this request waits
            return ServerReply(text="<tool_off><answer>A</answer>", delay_s=60)
        return _reply(request)


def _alias(server: OpenAITestServer, out: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        app,
        [
            "autotool", "eval",
            "--model", "openai/test-vlm",
            "--base-url", server.base_url,
            "--dataset", "synthetic:3:640",
            "--out", str(out),
            "--max-pixels", "100000",
            "--concurrency", "1",
            "--image-format", "jpeg",
            "--no-progress",
            "--timeout", "30",
            *extra,
        ],
    )  # fmt: skip


def test_autotool_eval_alias_failures_resume_recovery_and_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    script = Script(fail_at=1)
    with OpenAITestServer(script) as server:
        first = _alias(server, out)
        # Question 1 failed (HTTP 400 after the model had answered): recorded, exit code 3.
        assert first.exit_code == 3, first.output
        assert "1 of 3 episode(s) failed" in first.output and "overall" in first.output
        # model check + 2 calls for each of questions 0 and 2 + the refused call of question 1
        assert len(server.chat_requests) == 6
        urls = [
            p["image_url"]["url"]
            for m in server.chat_requests[2]["messages"]
            if isinstance(m["content"], list)
            for p in m["content"]
            if p["type"] == "image_url"
        ]
        assert len(urls) == 2 and all(u.startswith("data:image/jpeg") for u in urls)

        script.broken = False
        again = _alias(server, out)  # a rerun skips everything finished, failed rows included
        assert again.exit_code == 3 and len(server.chat_requests) == 6
        retried = _alias(server, out, "--retry-failed")
        assert retried.exit_code == 0, retried.output
        assert len(server.chat_requests) == 6 + 3  # model check + the failed question's 2 calls
        tail = json.loads(retried.output.strip().splitlines()[-2])
        assert tail == {"accuracy": pytest.approx(tail["accuracy"]), "tool_on_share": 1.0}

        # A lost store: the finished episodes come back from their trajectories, none is re-run.
        (out / "results.sqlite").unlink()
        recovered = _alias(server, out)
        assert recovered.exit_code == 0 and len(server.chat_requests) == 9
        assert "rebuilt from the saved trajectories" in recovered.output

    run = json.loads((out / "run.json").read_text())
    assert run["agents"] == ["autotool"] and run["dataset"] == "synthetic:3:640"
    assert run["agent_config"]["max_pixels"] == 100_000
    # The shown image's cap is under the provider's own, so it is not passed on (issue 26).
    assert run["model_args"] == {"image_format": "jpeg", "timeout_s": 30.0}
    summary = json.loads((out / "autotool_summary.json").read_text())
    assert summary["overall"]["n"] == 3 and summary["overall"]["tool_on_share"] == 1.0

    report = CliRunner().invoke(app, ["report", str(out), "--out", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    md = (tmp_path / "report" / "report.md").read_text()
    assert "AutoTool: mode frequency per benchmark" in md and "AutoTool: cost per answer by mode" in md
    assert "| tool_on | 3 |" in md
    figure = tmp_path / "report" / "figures" / "autotool_mode_frequency.png"
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "AutoTool mode frequency per benchmark" in (tmp_path / "report" / "index.html").read_text()


@pytest.mark.slow
def test_eval_agents_autotool_resumes_after_a_kill(tmp_path: Path) -> None:
    out = tmp_path / "run"
    script = Script()
    script.hold = threading.Event()
    args = [
        "eval", "--agents", "autotool",
        "--model", "openai/test-vlm",
        "--dataset", "synthetic:3:640",
        "--out", str(out),
        "--concurrency", "1",
        "--no-progress",
    ]  # fmt: skip
    with OpenAITestServer(script) as server:
        env = {**os.environ, "PYTHONPATH": str(SRC), "EVISEEK_CACHE_DIR": str(tmp_path / "cache")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "eviseek", *args, "--base-url", server.base_url],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert script.held.wait(120), "the run never reached its third question"
            # Finished episodes are saved in the background: kill only once both are on disk, so
            # the resume has exactly one question left (a kill inside that window re-runs the
            # unsaved one too, which is correct but not what this test counts).
            deadline = time.monotonic() + 60
            while len(list((out / "episodes").rglob("trajectory.json"))) < 2:
                assert time.monotonic() < deadline, "the first two episodes were never saved"
                time.sleep(0.05)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        before = len(server.chat_requests)
        assert before == 1 + 2 + 2 + 1  # model check, questions 0 and 1, the held call of question 2
        script.hold = None
        resumed = CliRunner().invoke(app, [*args, "--base-url", server.base_url])
        assert resumed.exit_code == 0, resumed.output
        new = server.chat_requests[before:]
        # Only the killed question runs again (after the model check).
        assert [_image_key(r) for r in new[1:]] == [script.order[2]] * 2
        assert "1 episode(s) run, 2 already finished, 0 failed" in resumed.output
    report = CliRunner().invoke(app, ["report", str(out)])
    assert report.exit_code == 0, report.output
    assert "AutoTool: mode frequency per benchmark" in (out / "report" / "report.md").read_text()


def test_autotool_eval_reports_bad_input_in_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(
        app, ["autotool", "eval", "--model", "scripted/echo", "--dataset", "nope", "--out", str(tmp_path)]
    )
    assert bad.exit_code == 1 and "nope" in bad.output and len(bad.output.strip().splitlines()) == 1
    mode = runner.invoke(
        app,
        ["autotool", "eval", "--model", "scripted/x", "--dataset", "synthetic:1", "--force-mode", "maybe"],
    )
    assert mode.exit_code == 2 and "--force-mode" in mode.output
    option = runner.invoke(
        app,
        [
            "autotool",
            "eval",
            "--model",
            "scripted/x",
            "--dataset",
            "pope:/x?shuffle=off",
            "--out",
            str(tmp_path),
        ],
    )
    assert option.exit_code == 1 and "shuffle=on|off" in option.output

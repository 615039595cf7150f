"""`eviseek autotool eval` end to end against a real local OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.testing.openai_server import OpenAITestServer


def _reply(request: dict) -> str:
    # The first user turn of every request states the question; zoom once, then answer.
    assistant_turns = [m for m in request["messages"] if m["role"] == "assistant"]
    if not assistant_turns:
        return (
            '<tool_on><think>small</think><tool_call>{"name": "image_zoom_in_tool", '
            '"arguments": {"bbox_2d": [10, 10, 200, 150]}}</tool_call>'
        )
    return "<think>seen</think><answer>A</answer>"


def test_autotool_eval_command(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with OpenAITestServer(_reply) as server:
        result = CliRunner().invoke(
            app,
            [
                "autotool", "eval",
                "--model", "openai/test-vlm",
                "--base-url", server.base_url,
                "--dataset", "synthetic:2:640",
                "--out", str(out),
                "--max-pixels", "100000",
                "--concurrency", "1",
                "--image-format", "jpeg",
            ],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert len(server.chat_requests) == 4
        urls = [
            p["image_url"]["url"]
            for m in server.chat_requests[1]["messages"]
            if isinstance(m["content"], list)
            for p in m["content"]
            if p["type"] == "image_url"
        ]
        assert len(urls) == 2 and all(u.startswith("data:image/jpeg") for u in urls)
    assert "overall" in result.output and "tool_on" in result.output
    tail = json.loads(result.output.strip().splitlines()[-1])
    assert tail["tool_on_share"] == 1.0
    assert (out / "results.sqlite").exists() and (out / "autotool_summary.json").exists()


def test_autotool_eval_reports_bad_input_in_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(
        app, ["autotool", "eval", "--model", "scripted/echo", "--dataset", "nope", "--out", str(tmp_path)]
    )
    assert bad.exit_code == 1 and "NAME:PATH" in bad.output and len(bad.output.strip().splitlines()) == 1
    mode = runner.invoke(
        app,
        ["autotool", "eval", "--model", "scripted/x", "--dataset", "synthetic:1", "--force-mode", "maybe"],
    )
    assert mode.exit_code == 2 and "--force-mode" in mode.output

"""``eviseek demo`` end to end: a real subprocess, the harness, the report and the viewer pages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eviseek.cli.demo import interleave
from eviseek.types import Question


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "160"}
    return subprocess.run(
        [sys.executable, "-m", "eviseek", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_interleave_spreads_a_limit_over_subcategories() -> None:
    qs = [Question(id=f"{s}{i}", text="?", subcategory=s) for s in "abc" for i in range(2)]
    assert [q.id for q in interleave(qs)] == ["a0", "b0", "c0", "a1", "b1", "c1"]


@pytest.mark.slow
def test_demo_on_two_questions(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    proc = _run(["demo", "--limit", "2", "--out", str(out), "--env-workers", "0", "--no-progress"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "pixel-only reference policy, not a VLM" in text
    assert "Accuracy by family" in text and "Support-weighted accuracy" in text
    for agent in ("passive", "single-model", "eviseek"):
        assert agent in text
    assert "6 episode(s) run, 0 already done, 0 failed" in text
    report = out / "report" / "index.html"
    assert f"HTML report: {report.resolve()}" in text
    assert report.is_file() and report.stat().st_size > 1000
    pages = sorted((out / "report" / "episodes").rglob("*.html"))
    assert len(pages) == 6
    config = json.loads((out / "run.json").read_text())
    assert config["model"] == "reference/tabletop" and config["agents"] == [
        "passive",
        "single-model",
        "eviseek",
    ]
    questions = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert len({q["subcategory"] for q in questions}) == 2  # --limit spreads over kinds of question

    # Running it again resumes the run: nothing is redone, the table and report come back.
    again = _run(["demo", "--limit", "2", "--out", str(out), "--env-workers", "0", "--no-progress"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert "0 episode(s) run, 6 already done" in again.stdout
    assert "Accuracy by family" in again.stdout


def test_demo_reports_a_bad_key_variable(tmp_path: Path) -> None:
    proc = _run(
        [
            "demo",
            "--model",
            "openai/some-vlm",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--api-key-env",
            "EVISEEK_TEST_NO_SUCH_VARIABLE",
            "--out",
            str(tmp_path / "x"),
        ],
        tmp_path,
    )
    assert proc.returncode == 1
    assert "EVISEEK_TEST_NO_SUCH_VARIABLE" in proc.stderr and "not set" in proc.stderr


@pytest.mark.slow
def test_demo_with_a_real_openai_compatible_server(tmp_path: Path) -> None:
    """--model openai/NAME --base-url URL: the same demo, answered over HTTP by a local server."""
    from eviseek.testing.openai_server import OpenAITestServer, request_images

    def answer(request: dict) -> str:
        # Real providers never see the stage metadata: the request is plain chat with images.
        assert "stage" not in json.dumps(request)
        if "Reply with the word OK." in json.dumps(request):
            return "OK"  # the one text-only check before the first episode (as `eval` sends)
        assert request_images(request), "the demo sends the scene's pixels"
        return '{"answer": "yes", "reasoning": "a fixed reply from the test server"}'

    with OpenAITestServer(answer) as srv:
        proc = _run(
            [
                "demo",
                "--model",
                "openai/test-vlm",
                "--base-url",
                srv.base_url,
                "--agents",
                "passive",
                "--limit",
                "2",
                "--out",
                str(tmp_path / "vlm"),
                "--env-workers",
                "0",
                "--no-progress",
            ],
            tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        assert len(srv.requests) == 3  # the server check, then one call per episode
        assert {r["json"]["model"] for r in srv.requests} == {"test-vlm"}
    assert "openai/test-vlm" in proc.stdout and "not a VLM" not in proc.stdout
    assert "2 episode(s) run, 0 already done, 0 failed" in proc.stdout
    assert (tmp_path / "vlm" / "report" / "index.html").is_file()


@pytest.mark.slow
def test_house_demo_runs_the_navigation_agents_and_express_metrics(tmp_path: Path) -> None:
    out = tmp_path / "house"
    args = ["demo", "--env", "house", "--limit", "1", "--budget", "12", "--out", str(out)]
    proc = _run([*args, "--env-workers", "0", "--no-progress"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "5 agents x 1 house questions" in text
    assert "5 episode(s) run, 0 already done, 0 failed" in text
    assert "judge: 5 new EXPRESS-Bench grade(s)" in text
    assert "EXPRESS-Bench metrics" in text
    for column in ("C*", "E_path", "d_T"):
        assert column in text
    config = json.loads((out / "run.json").read_text())
    assert config["agents"] == ["blind", "passive", "single-model", "eviseek-nav", "frontier"]
    assert config["budget"] == 12 and config["dataset"].endswith("house")
    assert len((out / "express.jsonl").read_text().splitlines()) == 5


def test_demo_refuses_an_unknown_env(tmp_path: Path) -> None:
    proc = _run(["demo", "--env", "kitchen"], tmp_path)
    assert proc.returncode == 2 and "unknown --env 'kitchen'; use one of: tabletop, house" in proc.stderr


def test_demo_stops_at_a_dead_model_server_before_any_episode(tmp_path: Path) -> None:
    """Nothing listens at the URL: one line and exit 1, as `eval` does, not a table of 0.0 and
    every episode recorded as failed with exit 0 (what it did before)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free once closed: nothing listens there
    proc = _run(
        ["demo", "--model", "openai/some-vlm", "--base-url", f"http://127.0.0.1:{port}/v1", "--limit", "2",
         "--out", str(tmp_path / "d"), "--env-workers", "0", "--no-progress", "--no-episodes"],
        tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: model check before the first episode failed")
    assert "unreachable" in errors[0] and "Traceback" not in proc.stderr
    assert "Accuracy by family" not in proc.stdout and "episode(s) run" not in proc.stdout


def test_demo_with_failed_episodes_exits_3_after_its_tables(tmp_path: Path) -> None:
    """A server that answers the check and one episode, then refuses the next request: the demo
    still prints its comparison, then one line on the failure and exit code 3 (it exited 0)."""
    from eviseek.testing.openai_server import OpenAITestServer, ServerReply

    episodes: list[dict] = []

    def answer(request: dict) -> str | ServerReply:
        if "Reply with the word OK." in json.dumps(request):
            return "OK"
        episodes.append(request)
        if len(episodes) == 1:
            return '{"answer": "yes", "reasoning": "a fixed reply from the test server"}'
        return ServerReply.error(400, "this prompt is longer than the model's context")

    with OpenAITestServer(answer) as srv:
        proc = _run(
            ["demo", "--model", "openai/test-vlm", "--base-url", srv.base_url, "--agents", "passive",
             "--limit", "2", "--concurrency", "1", "--out", str(tmp_path / "d"), "--env-workers", "0",
             "--no-progress", "--no-episodes"],
            tmp_path,
        )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    assert "Accuracy by family" in proc.stdout
    last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
    assert last.startswith("error: 1 of 2 episode(s) failed") and "--retry-failed" in last

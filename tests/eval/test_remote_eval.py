"""``eviseek eval --env-url``: the simulator behind ``eviseek env serve``, driven through the CLI."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.eval.store import load_results
from tests.envs.remote.serving import serve_cli
from tests.eval import toy_plugin
from tests.eval.toy_plugin import make_questions, write_questions_jsonl

TOKEN = "remote-eval-token-42"
PLUGIN = str(Path(toy_plugin.__file__).resolve())
# Fields that differ between any two runs of the same episode (ids, clocks).
VOLATILE = {"episode_id", "started_at", "wall_time_s", "latency_s", "created_at", "ts", "time_s"}


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _trajectories(run: Path) -> dict[str, Any]:
    out = {}
    for path in sorted((run / "episodes").glob("*/*/trajectory.json")):
        traj = _stable(json.loads(path.read_text()))
        for call in traj["calls"]:
            call.pop("id")  # random per model call
        out[str(path.parent.relative_to(run))] = traj
    return out


def _rows(run: Path) -> dict[tuple[str, str], tuple[Any, ...]]:
    return {
        (r.agent, r.question_id): (r.answer, r.correct, r.score, r.support, r.steps, r.calls, r.error)
        for r in load_results(run)
    }


@pytest.mark.slow
def test_tabletop_served_remotely_equals_a_local_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVISEEK_ENV_TOKEN", TOKEN)
    proc, url = serve_cli("--env", "eviseek/Tabletop-v0", env={**os.environ})
    try:
        common = [
            "eval", "--agents", "passive,single-model,eviseek", "--model", "reference",
            "--dataset", "tabletop:dev", "--limit", "3", "--concurrency", "3", "--no-progress",
        ]  # fmt: skip
        runner = CliRunner()
        remote = runner.invoke(app, [*common, "--out", str(tmp_path / "remote"), "--env-url", url])
        assert remote.exit_code == 0, remote.output
        local = runner.invoke(app, [*common, "--out", str(tmp_path / "local"), "--env-workers", "1"])
        assert local.exit_code == 0, local.output
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert len(_rows(tmp_path / "local")) == 9
    assert _rows(tmp_path / "remote") == _rows(tmp_path / "local")
    remote_trajs, local_trajs = _trajectories(tmp_path / "remote"), _trajectories(tmp_path / "local")
    assert len(local_trajs) == 9 and sum(len(t["steps"]) for t in local_trajs.values()) > 0
    assert remote_trajs == local_trajs  # actions, feedback, image hashes, calls, board, answers
    # The images themselves are the same files (named by their hashes).
    names = sorted(p.name for p in (tmp_path / "local" / "episodes").rglob("*.png"))
    assert names == sorted(p.name for p in (tmp_path / "remote" / "episodes").rglob("*.png"))


def test_eval_with_env_url_needs_the_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVISEEK_ENV_TOKEN", raising=False)
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(2))
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--plugin",
            PLUGIN,
            "--agents",
            "toy-seeker",
            "--model",
            "toy/oracle",
            "--dataset",
            str(data),
            "--out",
            str(tmp_path / "run"),
            "--env-url",
            "http://127.0.0.1:9",
        ],
    )
    assert result.exit_code == 1
    assert "EVISEEK_ENV_TOKEN is not set" in result.output


@pytest.mark.slow
def test_a_server_killed_mid_run_fails_its_episodes_clearly_and_a_rerun_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVISEEK_ENV_TOKEN", TOKEN)
    # Every look takes 0.4 s on the server: the kill lands while episodes are mid-step.
    slow = {f"q{i:03d}": {"scene": {"step_delay_s": 0.4}} for i in range(8)}
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(8, special=slow))
    run = tmp_path / "run"
    proc, url = serve_cli("--env", toy_plugin.ENV_ID, "--plugin", PLUGIN, env={**os.environ})
    args = [
        "eval", "--plugin", PLUGIN, "--agents", "toy-seeker", "--model", "toy/oracle",
        "--dataset", str(data), "--out", str(run), "--concurrency", "4", "--timeout", "120",
        "--env-url", url, "--no-progress",
    ]  # fmt: skip
    killer = threading.Timer(1.5, proc.kill)
    killer.start()
    started = time.monotonic()
    try:
        first = CliRunner().invoke(app, args)
    finally:
        killer.cancel()
        proc.kill()
        proc.wait(timeout=10)
    assert time.monotonic() - started < 30  # failures, not 120 s timeouts or a hang
    assert first.exit_code == 3, first.output  # the run ended holding failed episodes (issue 14)
    rows = load_results(run)
    assert len(rows) == 8
    failed = [r for r in rows if r.error]
    assert failed, "the kill should have cut some episodes"
    for r in failed:
        assert "env server at http://127.0.0.1" in (r.error or ""), r.error
    # A new server on another port: the same run resumes and retries only the failed episodes.
    proc, url2 = serve_cli("--env", toy_plugin.ENV_ID, "--plugin", PLUGIN, env={**os.environ})
    try:
        again = CliRunner().invoke(app, [*args[:-3], "--env-url", url2, "--no-progress", "--retry-failed"])
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert again.exit_code == 0, again.output
    assert f"{len(failed)} episode(s) run, {8 - len(failed)} already finished, 0 failed" in again.output
    final = load_results(run)
    assert len(final) == 8 and all(r.error is None and r.correct for r in final)


def test_env_images_reach_the_server_and_a_server_that_is_gone_stops_the_run_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eviseek.envs.remote import EnvServer
    from tests.eval.toy_plugin import RevealEnv

    monkeypatch.setenv("EVISEEK_ENV_TOKEN", TOKEN)
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(3))
    base = [
        "eval", "--plugin", PLUGIN, "--agents", "toy-seeker", "--model", "toy/oracle",
        "--dataset", str(data), "--no-progress",
    ]  # fmt: skip
    with EnvServer(RevealEnv, token=TOKEN, env_id=toy_plugin.ENV_ID) as server:
        asked: list[str] = []
        original = server.call

        def recording(key: str, op: str, body: bytes, encoding: str):  # type: ignore[no-untyped-def]
            asked.append(encoding)
            return original(key, op, body, encoding)

        server.call = recording  # type: ignore[method-assign]
        runs = {}
        for images in ("png", "raw", "jpeg"):
            asked.clear()
            out = tmp_path / images
            result = CliRunner().invoke(
                app, [*base, "--out", str(out), "--env-url", server.url, "--env-images", images]
            )
            assert result.exit_code == 0, result.output
            assert asked and set(asked) == {images}
            assert json.loads((out / "run.json").read_text())["env_images"] == images
            runs[images] = {(r.question_id, r.answer, r.correct, r.steps) for r in load_results(out)}
        assert runs["png"] == runs["raw"] == runs["jpeg"]
    assert "note: the env server sends no" not in result.output

    class Older(EnvServer):  # a server from before jpeg: its /v1/info lists png and raw only
        def info(self):  # type: ignore[no-untyped-def]
            return super().info().model_copy(update={"image_encodings": ["png", "raw"]})

    with Older(RevealEnv, token=TOKEN, env_id=toy_plugin.ENV_ID) as old:
        noted = CliRunner().invoke(
            app, [*base, "--out", str(tmp_path / "old"), "--env-url", old.url, "--env-images", "jpeg"]
        )
    assert noted.exit_code == 0, noted.output
    assert "note: the env server sends no jpeg images (it offers png, raw); it answers in png" in noted.output
    # A server that is not there: one line, exit 1, no episode recorded as failed.
    down = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "down"), "--env-url", server.url])
    assert down.exit_code == 1, down.output
    assert "cannot use the env server (--env-url)" in down.output
    assert not (tmp_path / "down" / "results.sqlite").exists()  # no episode ran, none failed
    bad = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "bad"), "--env-images", "gif"])
    assert bad.exit_code == 2 and "--env-images must be png, raw or jpeg" in bad.output


def test_concurrency_above_the_servers_session_cap_queues_instead_of_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eviseek.envs.remote import EnvServer
    from tests.eval.toy_plugin import RevealEnv

    monkeypatch.setenv("EVISEEK_ENV_TOKEN", TOKEN)
    # Each look takes a moment on the server, so episodes overlap and the cap binds.
    slow = {f"q{i:03d}": {"scene": {"step_delay_s": 0.05}} for i in range(12)}
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(12, special=slow))
    with EnvServer(RevealEnv, token=TOKEN, max_sessions=2) as server:
        result = CliRunner().invoke(
            app,
            [
                "eval",
                "--plugin",
                PLUGIN,
                "--agents",
                "toy-seeker",
                "--model",
                "toy/oracle",
                "--dataset",
                str(data),
                "--out",
                str(tmp_path / "run"),
                "--concurrency",
                "16",
                "--timeout",
                "120",
                "--env-url",
                server.url,
                "--no-progress",
            ],
        )
        assert result.exit_code == 0, result.output
        assert "12 episode(s) run, 0 already finished, 0 failed" in result.output
        assert server.peak_sessions == 2  # the cap was reached and never passed
        assert server.sessions == {}  # every episode closed its session
    assert all(r.error is None and r.correct for r in load_results(tmp_path / "run"))

"""The env server and ``RemoteEnv`` over real HTTP on 127.0.0.1: protocol, limits, failures."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from eviseek.envs.remote import EnvServer, RemoteEnv, check_server, serve_registered, wire
from eviseek.errors import ConfigError, EnvError
from eviseek.types import Action, Image
from tests.envs.remote.serving import serve_cli
from tests.eval import toy_plugin
from tests.eval.toy_plugin import RevealEnv, make_questions

TOKEN = "test-token-0123456789"
PLUGIN = str(Path(toy_plugin.__file__).resolve())


@pytest.fixture
def toy_server():  # type: ignore[no-untyped-def]
    # Any Env-protocol object can be served, not only registered ids.
    with EnvServer(RevealEnv, token=TOKEN, call_timeout_s=2.0) as server:
        yield server


def test_the_toy_server_passes_the_conformance_check(toy_server: EnvServer) -> None:
    results = check_server(toy_server.url, TOKEN, make_questions(1)[0], timeout_s=10)
    assert [r.name for r in results if not r.ok] == [], results
    assert len(results) == 12  # with the Env protocol in png, raw and jpeg
    assert toy_server.sessions == {}  # the check closed every session it opened


def test_the_tabletop_server_passes_the_conformance_check() -> None:
    from eviseek.envs.tabletop import sample_question

    with serve_registered("eviseek/Tabletop-v0", {}, token=TOKEN) as server:
        results = check_server(server.url, TOKEN, sample_question(1), timeout_s=60)
    assert all(r.ok for r in results), [r for r in results if not r.ok]


def test_a_broken_server_fails_the_check() -> None:
    class NoRefusal(EnvServer):
        def authorized(self, header: str | None) -> bool:  # accepts anything: must be caught
            return True

    with NoRefusal(RevealEnv, token=TOKEN) as server:
        results = {r.name: r for r in check_server(server.url, TOKEN, make_questions(1)[0], timeout_s=10)}
    assert not results["a request without a token is refused (401)"].ok
    assert not results["a request with a wrong token is refused (401)"].ok
    assert "expected HTTP 401, got 200" in results["a request with a wrong token is refused (401)"].detail


def test_remote_episode_matches_local_and_carries_images(toy_server: EnvServer) -> None:
    question = make_questions(3)[2]
    question.reference_images = [Image.from_array(np.full((4, 6, 3), 7, dtype=np.uint8))]
    for images in ("png", "raw"):
        remote, local = RemoteEnv(toy_server.url, token=TOKEN, images=images), RevealEnv()
        try:
            outs = []
            for env in (local, remote):
                obs, info = env.reset(seed=5, options={"question": question})
                steps = [env.step(Action(name="look")) for _ in range(3)]
                bad = env.step(Action(name="jump"))
                outs.append(
                    (
                        obs.image.digest(),
                        obs.metadata,
                        info,
                        [(s.observation.image.digest(), s.observation.frame_id, s.feedback) for s in steps],
                        bad.feedback,
                        env.visual_support([0]),
                        env.visual_support([3]),
                        [a.name for a in env.legal_actions()],
                    )
                )
            assert outs[0] == outs[1]
        finally:
            remote.close()


def test_wrong_or_missing_token_is_refused_without_echoing_it(toy_server: EnvServer) -> None:
    with pytest.raises(EnvError, match="HTTP 401") as err:
        RemoteEnv(toy_server.url, token="not-the-token")
    assert "not-the-token" not in str(err.value) and TOKEN not in str(err.value)
    conn = http.client.HTTPConnection("127.0.0.1", toy_server.port, timeout=5)
    conn.request("GET", "/v1/info")  # no Authorization header at all
    assert conn.getresponse().status == 401
    conn.close()
    with pytest.raises(ConfigError, match="needs a token"):
        EnvServer(RevealEnv, token="")


def test_a_slow_call_times_out_on_the_server_and_the_session_is_closed(toy_server: EnvServer) -> None:
    question = make_questions(1, special={"q000": {"scene": {"step_delay_s": 3.0}}})[0]
    env = RemoteEnv(toy_server.url, token=TOKEN, timeout_s=20)
    env.reset(options={"question": question})
    started = time.perf_counter()
    with pytest.raises(EnvError, match="HTTP 504"):
        env.step(Action(name="look"))
    assert time.perf_counter() - started < 2.9  # the server's 2 s limit, not the 3 s step
    with pytest.raises(EnvError, match="HTTP 404"):  # the session is gone
        env.legal_actions()


def test_a_client_deadline_turns_a_stalled_server_into_an_error() -> None:
    question = make_questions(1, special={"q000": {"scene": {"step_delay_s": 3.0}}})[0]
    with EnvServer(RevealEnv, token=TOKEN, call_timeout_s=60) as server:
        env = RemoteEnv(server.url, token=TOKEN, timeout_s=0.5)
        env.reset(options={"question": question})
        started = time.perf_counter()
        with pytest.raises(EnvError, match=r"no answer within 0.5s"):
            env.step(Action(name="look"))
        assert time.perf_counter() - started < 2.0


def test_an_environment_exception_is_a_clear_error(toy_server: EnvServer) -> None:
    question = make_questions(1, special={"q000": {"scene": {"env_crash": True}}})[0]
    env = RemoteEnv(toy_server.url, token=TOKEN)
    env.reset(options={"question": question})
    with pytest.raises(EnvError, match=r"HTTP 500.*simulated simulator crash"):
        env.step(Action(name="look"))
    env.close()


def test_a_lost_reply_is_resent_without_stepping_twice(toy_server: EnvServer) -> None:
    env = RemoteEnv(toy_server.url, token=TOKEN)
    question = make_questions(1, special={"q000": {"scene": {"reveal_after": 9}}})[0]
    env.reset(options={"question": question})
    first = env.step(Action(name="look"))
    env._seq -= 1  # the same request again, as after a dropped connection
    again = env.step(Action(name="look"))
    assert again.observation.frame_id == first.observation.frame_id == 1
    assert env.step(Action(name="look")).observation.frame_id == 2
    env.close()


def test_session_limit_and_oversized_bodies(toy_server: EnvServer) -> None:
    with EnvServer(RevealEnv, token=TOKEN, max_sessions=1, max_request_bytes=4096) as server:
        env = RemoteEnv(server.url, token=TOKEN)
        started = time.monotonic()
        with pytest.raises(EnvError, match=r"HTTP 503.*still full"):
            RemoteEnv(server.url, token=TOKEN, timeout_s=1.0)  # waits its deadline for a slot
        assert 0.9 < time.monotonic() - started < 5
        big = make_questions(1)[0]
        big.text = "x" * 10_000
        with pytest.raises(EnvError, match="HTTP 413"):
            env.reset(options={"question": big})
        env.close()
        assert server.sessions == {}


def test_wire_rejects_inconsistent_messages() -> None:
    blobs = wire.new_blobs("raw")
    record = blobs.add(Image.from_array(np.zeros((2, 2, 3), dtype=np.uint8)))
    body = wire.encode({"image": record}, blobs)
    with pytest.raises(EnvError, match="announces 12 bytes"):
        wire.decode(body[:-1])
    with pytest.raises(EnvError, match="not JSON"):
        wire.decode(b"\xff\n")


def test_cli_serve_refuses_to_start_without_a_token() -> None:
    env = {k: v for k, v in os.environ.items() if k != "EVISEEK_ENV_TOKEN"}
    run = subprocess.run(
        [sys.executable, "-m", "eviseek", "env", "serve", "--env", "eviseek/Tabletop-v0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert run.returncode == 2
    assert "EVISEEK_ENV_TOKEN is not set" in run.stderr


@pytest.mark.slow
def test_a_server_killed_mid_step_is_a_clear_failure_not_a_hang() -> None:
    env_vars = {**os.environ, "EVISEEK_ENV_TOKEN": TOKEN}
    proc, url = serve_cli("--env", toy_plugin.ENV_ID, "--plugin", PLUGIN, env=env_vars)
    try:
        question = make_questions(1, special={"q000": {"scene": {"step_delay_s": 30.0}}})[0]
        env = RemoteEnv(url, token=TOKEN, timeout_s=60)
        env.reset(options={"question": question})
        proc_killed_at = time.monotonic() + 0.5

        import threading

        threading.Timer(0.5, proc.kill).start()
        with pytest.raises(EnvError, match=r"env server at http://127\.0\.0\.1:\d+") as err:
            env.step(Action(name="look"))
        assert time.monotonic() - proc_killed_at < 5.0  # not the 30 s step, not the 60 s deadline
        assert "refused the connection" in str(err.value) or "lost the connection" in str(err.value)
    finally:
        proc.kill()
        proc.wait(timeout=10)


@pytest.mark.slow
def test_cli_env_check_passes_a_good_server_and_fails_a_bad_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from eviseek.cli.main import app
    from tests.eval.toy_plugin import write_questions_jsonl

    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(2))
    monkeypatch.setenv("EVISEEK_ENV_TOKEN", TOKEN)
    with EnvServer(RevealEnv, token=TOKEN) as server:
        ok = CliRunner().invoke(app, ["env", "check", server.url, "--dataset", str(data), "--plugin", PLUGIN])
    assert ok.exit_code == 0, ok.output
    assert "12/12 checks passed" in ok.output
    with EnvServer(RevealEnv, token=TOKEN) as server:
        raw = CliRunner().invoke(
            app, ["env", "check", server.url, "-d", str(data), "--plugin", PLUGIN, "--env-images", "raw"]
        )
        bogus = CliRunner().invoke(app, ["env", "check", server.url, "-d", str(data), "--env-images", "gif"])
    assert raw.exit_code == 0, raw.output
    assert "(raw images)" in raw.output and "(png images)" not in raw.output
    assert "8/8 checks passed" in raw.output
    assert bogus.exit_code == 2 and "--env-images must be one of png, raw, jpeg" in bogus.output

    class LeakySessions(EnvServer):
        def close_session(self, key: str) -> None:  # never closes: the check must notice
            return None

    with LeakySessions(RevealEnv, token=TOKEN) as server:
        bad = CliRunner().invoke(app, ["env", "check", server.url, "--dataset", str(data), "--json"])
    assert bad.exit_code == 1
    failed = [r["name"] for r in json.loads(bad.output) if not r["ok"]]
    assert failed == ["a closed session is gone"]
    monkeypatch.delenv("EVISEEK_ENV_TOKEN")
    missing = CliRunner().invoke(app, ["env", "check", "http://127.0.0.1:9", "--dataset", str(data)])
    assert missing.exit_code == 1 and "EVISEEK_ENV_TOKEN is not set" in missing.output


def test_jpeg_images_travel_smaller_and_close_to_the_pixels(toy_server: EnvServer) -> None:
    y, x = np.mgrid[0:120, 0:160]
    frame = Image.from_array(np.stack([x, y, x + y], axis=-1).astype(np.uint8))  # smooth, like a render
    sizes = {}
    for encoding in wire.ENCODINGS:
        blobs = wire.new_blobs(encoding)
        body = wire.encode({"image": blobs.add(frame)}, blobs)
        sizes[encoding] = len(body)
        payload, arrays = wire.decode(body)
        assert arrays[0].shape == (120, 160, 3) and payload["image"]["blob"] == 0
        error = np.abs(arrays[0].astype(int) - frame.array().astype(int)).mean()
        assert error == 0 if encoding in wire.LOSSLESS else 0 < error < 3
    assert sizes["jpeg"] < sizes["raw"]
    bad = b'{"blobs": [{"nbytes": 4, "encoding": "jpeg"}]}\nabcd'
    with pytest.raises(EnvError, match="jpeg image blob cannot be decoded"):
        wire.decode(bad)
    # Through the server: it offers jpeg, sends it when asked, and refuses an unknown encoding.
    info = json.loads(_get(toy_server, "/v1/info"))
    assert info["image_encodings"] == ["png", "raw", "jpeg"]
    env = RemoteEnv(toy_server.url, token=TOKEN, images="jpeg")
    try:
        obs, _ = env.reset(seed=0, options={"question": make_questions(1)[0]})
        assert obs.image is not None and obs.image.array().shape[2] == 3
        status, reply = env.http.request(
            "POST", f"/v1/envs/{env.session}/legal_actions?images=gif", wire.encode({"seq": 99}), label="x"
        )
        assert status == 400 and b"unknown image encoding 'gif'" in reply
    finally:
        env.close()
    with pytest.raises(ConfigError, match="images must be one of png, raw, jpeg"):
        RemoteEnv(toy_server.url, token=TOKEN, images="gif")


def _get(server: EnvServer, path: str) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1]), timeout=10)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {TOKEN}"})
        return conn.getresponse().read()
    finally:
        conn.close()

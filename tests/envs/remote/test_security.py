"""The env server and its client read no file that a run does not own, and no one locks them up.

Each test reproduces a finding of the hostile sweep of issue 37 over real sockets on 127.0.0.1:
path images in a reset (absolute, ``../``, a symlink) read on the server; a path in a server's
reply read on the client; idle strangers locking token holders out; a FIFO or a 144-megapixel
file under the asset root pinning or bloating the server; a body read as the next request; and
500s (with server paths in their text) for a client's own mistakes.
"""

from __future__ import annotations

import builtins
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage

from eviseek.envs import deadline
from eviseek.envs.image.env import ImageZoomEnv
from eviseek.envs.remote import EnvServer, RemoteEnv, wire
from eviseek.errors import EnvError
from eviseek.types import Image, Question
from tests.envs.remote.serving import serve_cli
from tests.eval.toy_plugin import RevealEnv, make_questions

TOKEN = "security-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every path this process opens from now on (``open`` and ``os.open``)."""
    seen: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(file))
        return real_open(file, *args, **kwargs)

    def spy_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        seen.append(str(path))
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    yield seen


def _secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret" / "private.png"
    path.parent.mkdir()
    PILImage.fromarray(np.full((8, 8, 3), 201, dtype=np.uint8)).save(path)
    return path


def _raw(port: int, data: bytes, timeout: float = 5.0) -> bytes:
    """Send ``data`` on one connection; everything the server answers until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        reply = b""
        try:
            while chunk := sock.recv(65536):
                reply += chunk
        except TimeoutError:
            pass
    return reply


def _post(port: int, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", path, body=body, headers=AUTH)
        response = conn.getresponse()
        data = response.read()
        return response.status, json.loads(data.partition(b"\n")[0])
    finally:
        conn.close()


def _reset_naming(path: str) -> bytes:
    question = {"id": "q", "text": "?", "initial_image": {"path": path, "width": 8, "height": 8}}
    return json.dumps({"seq": 1, "options": {"question": question}}).encode() + b"\n"


def _session(port: int) -> str:
    status, body = _post(port, "/v1/envs", b"")
    assert status == 200
    return str(body["session"])


# -- 1. a token holder reads no file of the server's ---------------------------------------------


def test_a_path_a_symlink_and_dotdot_in_a_reset_read_nothing(tmp_path: Path, opened: list[str]) -> None:
    secret = _secret(tmp_path)
    served = tmp_path / "served"
    served.mkdir()
    (served / "link.png").symlink_to(secret)
    names = {
        "absolute": str(secret),
        "dotdot": str(served / ".." / "secret" / "private.png"),
        "relative dotdot": "../secret/private.png",
        "symlink": str(served / "link.png"),
    }
    for extra in ({}, {"asset_root": served}):  # refused outright, or by the asset root's rules
        with EnvServer(ImageZoomEnv, token=TOKEN, **extra) as server:
            for what, name in names.items():
                key = _session(server.port)
                opened.clear()
                status, reply = _post(server.port, f"/v1/envs/{key}/reset", _reset_naming(name))
                assert status == 400, (what, extra, reply)
                assert not [p for p in opened if "private" in p or "link.png" in p], (what, opened)
                assert str(tmp_path) not in reply["error"].replace(name, "")  # no server path named


def test_an_existing_file_and_a_missing_one_get_the_same_refusal(tmp_path: Path) -> None:
    secret = _secret(tmp_path)
    with EnvServer(ImageZoomEnv, token=TOKEN) as server:
        answers = []
        for name in (str(secret), str(tmp_path / "none.png")):
            status, reply = _post(server.port, f"/v1/envs/{_session(server.port)}/reset", _reset_naming(name))
            answers.append((status, reply["error"]))
    assert answers[0] == answers[1] and answers[0][0] == 400
    assert "as a path instead of its bytes" in answers[0][1]


def test_images_under_the_asset_root_are_read(tmp_path: Path) -> None:
    served = tmp_path / "served"
    (served / "photos").mkdir(parents=True)
    PILImage.fromarray(np.full((30, 40, 3), 9, dtype=np.uint8)).save(served / "photos" / "a.png")
    with EnvServer(ImageZoomEnv, token=TOKEN, asset_root=served) as server:
        status, _ = _post(
            server.port, f"/v1/envs/{_session(server.port)}/reset", _reset_naming("photos/a.png")
        )
        assert status == 200
        conn_info = json.loads(_raw_info(server.port))
        assert conn_info["asset_root"] is True


def _raw_info(port: int) -> bytes:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/v1/info", headers=AUTH)
    data = conn.getresponse().read()
    conn.close()
    return data


# -- 2. a server's reply makes the client read nothing -------------------------------------------


class _MaliciousServer:
    """An HTTP server on 127.0.0.1 that answers every reset with an image naming ``path``."""

    def __init__(self, path: str, body: bytes | None = None) -> None:
        reply = {"observation": {"image": {"path": path, "width": 8, "height": 8}, "frame_id": 0}, "info": {}}
        body = body if body is not None else json.dumps(reply).encode() + b"\n"

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self, data: bytes) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                if self.path == "/v1/envs":
                    opened = wire.OpenedSession(session="s", env_id="toy/Reveal-v0", visual_support=False)
                    self._answer(opened.model_dump_json().encode())
                else:
                    self._answer(body)

            def do_DELETE(self) -> None:
                self._answer(b"{}")

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_server_reply_naming_a_client_path_reads_nothing(tmp_path: Path, opened: list[str]) -> None:
    secret = _secret(tmp_path)
    server = _MaliciousServer(str(secret))
    try:
        env = RemoteEnv(server.url, token=TOKEN, timeout_s=10)
        opened.clear()
        with pytest.raises(EnvError, match="as a path instead of its bytes"):
            env.reset(options={"question": make_questions(1)[0]})
        env.close()
    finally:
        server.close()
    assert not [p for p in opened if "private" in p]


def test_a_server_cannot_name_the_file_a_frame_is_saved_as(tmp_path: Path) -> None:
    """The saved file is named by the frame's hash; a hash taken from the reply would have let a
    server write outside the run folder."""
    image = {"blob": 0, "sha256": "../../../../escaped", "path": "/x.png", "width": 2, "height": 2}
    head = {"observation": {"image": image, "frame_id": 0}, "info": {}}
    head["blobs"] = [{"nbytes": 12, "encoding": "raw", "shape": [2, 2, 3]}]
    server = _MaliciousServer("", body=json.dumps(head).encode() + b"\n" + bytes(range(12)))
    try:
        env = RemoteEnv(server.url, token=TOKEN, timeout_s=10)
        obs, _ = env.reset(options={"question": make_questions(1)[0]})
        env.close()
    finally:
        server.close()
    run = tmp_path / "run"
    saved = obs.image.save(run)
    assert (run / saved).resolve().is_relative_to(run) and len(obs.image.digest()) == 64
    assert not list(tmp_path.glob("escaped*"))


def test_the_client_sends_its_own_path_images_as_bytes(tmp_path: Path) -> None:
    """A question image known by its path on the client is read there and travels as bytes."""
    PILImage.fromarray(np.full((12, 16, 3), 77, dtype=np.uint8)).save(tmp_path / "q.png")
    question = Question(
        id="q", text="?", initial_image=Image(path=str(tmp_path / "q.png"), width=16, height=12)
    )
    with EnvServer(ImageZoomEnv, token=TOKEN) as server:
        env = RemoteEnv(server.url, token=TOKEN, timeout_s=10)
        obs, _ = env.reset(options={"question": question})
        assert obs.image.array()[0, 0].tolist() == [77, 77, 77] and obs.image.path is None
        env.close()


# -- 3. no pre-authentication lockout -------------------------------------------------------------


def test_64_idle_strangers_do_not_keep_a_token_holder_out() -> None:
    question = make_questions(1)[0]
    with EnvServer(RevealEnv, token=TOKEN) as server:  # the default limits
        idle = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(64)]
        try:
            time.sleep(0.2)
            started = time.monotonic()
            env = RemoteEnv(server.url, token=TOKEN, timeout_s=10, wait_s=2.0)
            env.reset(options={"question": question})
            took = time.monotonic() - started
            env.close()
            assert took < 2.0, f"the token holder waited {took:.2f}s"
            assert server.connections.unauthenticated <= server.connections.max_unauthenticated_per_client
        finally:
            for sock in idle:
                sock.close()


def test_a_silent_connection_is_closed_after_the_short_first_bytes_deadline() -> None:
    with (
        EnvServer(RevealEnv, token=TOKEN, auth_timeout_s=0.3, request_timeout_s=60) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock,
    ):
        started = time.monotonic()
        assert sock.recv(1024) == b""  # closed by the server, not by our timeout
        assert time.monotonic() - started < 2.0


# -- 4. bounded work per request ------------------------------------------------------------------


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_a_144_megapixel_file_and_a_fifo_are_refused_at_once_in_little_memory(tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    PILImage.new("1", (12_000, 12_000)).save(served / "big.png")
    os.mkfifo(served / "pipe.png")
    env = {**os.environ, "EVISEEK_ENV_TOKEN": TOKEN}
    proc, url = serve_cli("--env", "eviseek/ImageZoom-v0", "--asset-root", str(served), env=env)
    try:
        port = int(url.rsplit(":", 1)[1])
        for name, why in (("big.png", "12000x12000 pixels"), ("pipe.png", "not an image file")):
            started = time.monotonic()
            status, reply = _post(port, f"/v1/envs/{_session(port)}/reset", _reset_naming(name))
            took = time.monotonic() - started
            assert status == 400 and why in reply["error"], reply
            assert took < 1.0, f"{name} took {took:.2f}s"
        assert _peak_rss_mb(proc.pid) < 200
    finally:
        proc.kill()
        proc.wait()


class _Endless:
    """An environment whose reset would run for ever, checking the call's deadline as it goes."""

    env_id = "toy/Endless-v0"
    rounds = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        while True:
            deadline.check()
            type(self).rounds += 1
            time.sleep(0.01)

    def close(self) -> None:
        pass


def test_work_past_the_call_timeout_is_stopped() -> None:
    with EnvServer(_Endless, token=TOKEN, call_timeout_s=0.3) as server:  # type: ignore[arg-type]
        status, reply = _post(server.port, f"/v1/envs/{_session(server.port)}/reset", b'{"seq": 1}\n')
        assert status == 504, reply
        time.sleep(0.1)
        rounds = _Endless.rounds
        time.sleep(0.3)
        assert _Endless.rounds == rounds  # the loop ended at the deadline instead of running on


# -- 5. HTTP hygiene ------------------------------------------------------------------------------


def test_a_body_sent_to_an_unknown_route_is_never_read_as_a_request() -> None:
    smuggled = f"GET /v1/info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode()
    head = f"POST /v1/nowhere HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
    request = (head + f"Content-Length: {len(smuggled)}\r\n\r\n").encode() + smuggled
    with EnvServer(RevealEnv, token=TOKEN) as server:
        reply = _raw(server.port, request)
    assert reply.startswith(b"HTTP/1.1 404") and reply.count(b"HTTP/1.1 ") == 1, reply


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"seq": 1, "seed": 1' + b"0" * 400 + b"}\n", "seed must be between"),
        (b'{"seq": 1, "seed": -1}\n', "seed must be between"),
    ],
)
def test_a_huge_seed_is_a_400(body: bytes, why: str) -> None:
    with EnvServer(RevealEnv, token=TOKEN) as server:
        status, reply = _post(server.port, f"/v1/envs/{_session(server.port)}/reset", body)
    assert status == 400 and why in reply["error"] and "\n" not in reply["error"]


def test_a_non_numeric_option_is_a_400(tmp_path: Path) -> None:
    question = Question(
        id="q", text="?", initial_image=Image.from_array(np.zeros((40, 40, 3), dtype=np.uint8))
    )
    with EnvServer(ImageZoomEnv, token=TOKEN) as server:
        env = RemoteEnv(server.url, token=TOKEN, timeout_s=10)
        with pytest.raises(EnvError, match=r"HTTP 400.*max_pixels must be a whole number"):
            env.reset(options={"question": question, "max_pixels": "lots"})
        env.close()


class _Leaky:
    """An environment whose errors name files on the server."""

    env_id = "toy/Leaky-v0"

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if seed == 1:
            raise FileNotFoundError(2, "No such file or directory", "/srv/private/scenes/x.json")
        raise RuntimeError("cannot parse /srv/private/scenes/x.json at line 3")

    def close(self) -> None:
        pass


def test_error_text_names_no_server_path() -> None:
    with EnvServer(_Leaky, token=TOKEN) as server:  # type: ignore[arg-type]
        for seed in (1, 2):
            key = _session(server.port)
            status, reply = _post(
                server.port, f"/v1/envs/{key}/reset", f'{{"seq": 1, "seed": {seed}}}\n'.encode()
            )
            assert status == 500 and "/srv" not in reply["error"] and "private" not in reply["error"], reply


def test_a_2_mb_tabletop_scene_is_a_400_before_building() -> None:
    from eviseek.envs.tabletop import TabletopEnv
    from eviseek.envs.tabletop.generate import sample_question

    question = sample_question(0, render_images=False).model_dump(mode="json")
    template = question["scene"]["objects"][0]
    question["scene"]["objects"] = [{**template, "name": f"cube_{i}"} for i in range(6500)]
    body = json.dumps({"seq": 1, "options": {"question": question}}).encode() + b"\n"
    assert len(body) > 2 * 10**6
    with EnvServer(lambda: TabletopEnv(width=32, height=24), token=TOKEN) as server:
        started = time.monotonic()
        status, reply = _post(server.port, f"/v1/envs/{_session(server.port)}/reset", body)
        took = time.monotonic() - started
    assert status == 400 and "may have 64 objects, this one has 6500" in reply["error"], reply
    assert took < 3.0  # loose: tests/envs/tabletop/test_limits.py shows nothing is built

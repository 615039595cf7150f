"""The env server under concurrency and hostile clients, over real sockets on 127.0.0.1.

Each test reproduces a defect found by outside testing: opens racing past the session cap,
trickling clients holding threads forever, small bodies that decode into huge images, malformed
messages answered with 500, and ``seq`` values that were replayed or run when they should be
refused.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import socket
import threading
import time
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage

from eviseek.envs.remote import EnvServer, RemoteEnv, wire
from eviseek.errors import EnvError
from eviseek.types import Action, Image
from tests.eval.toy_plugin import RevealEnv, make_questions

TOKEN = "hostile-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def slow_factory(delay_s: float) -> Any:
    def make() -> RevealEnv:
        time.sleep(delay_s)  # a simulator that takes a moment to build: the window the race needs
        return RevealEnv()

    return make


def _post(port: int, path: str, body: bytes = b"", timeout: float = 10.0) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, body=body, headers=AUTH)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_the_session_cap_holds_under_simultaneous_opens_in_100_of_100_trials() -> None:
    cap, opens, trials = 3, 24, 100
    with EnvServer(slow_factory(0.005), token=TOKEN, max_sessions=cap) as server:
        for trial in range(trials):
            start = threading.Barrier(opens)
            statuses: list[int] = []

            def open_one(start: threading.Barrier, statuses: list[int]) -> None:
                start.wait()
                statuses.append(_post(server.port, "/v1/envs")[0])

            threads = [threading.Thread(target=open_one, args=(start, statuses)) for _ in range(opens)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert statuses.count(200) <= cap, f"trial {trial}: {statuses.count(200)} sessions opened"
            assert set(statuses) <= {200, 503}, statuses
            assert len(server.sessions) <= cap and server.peak_sessions <= cap
            for key in list(server.sessions):
                server.close_session(key)
    assert server.peak_sessions == cap  # the cap was reached, not merely never approached


def test_remote_envs_above_the_cap_wait_for_a_slot_instead_of_failing() -> None:
    question = make_questions(1)[0]
    with EnvServer(slow_factory(0.01), token=TOKEN, max_sessions=2) as server:
        done: list[int] = []
        errors: list[str] = []

        def episode() -> None:
            try:
                env = RemoteEnv(server.url, token=TOKEN, timeout_s=30)
                env.reset(options={"question": question})
                env.step(Action(name="look"))
                time.sleep(0.05)
                env.close()
                done.append(1)
            except EnvError as exc:
                errors.append(str(exc))

        threads = [threading.Thread(target=episode) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [] and len(done) == 10
        assert server.peak_sessions <= 2


def _trickle(port: int, data: bytes, every_s: float, stop: threading.Event) -> float:
    """Send ``data`` one byte every ``every_s``; seconds until the server dropped us."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        for byte in data:
            if stop.is_set():
                break
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                return time.monotonic() - started
            time.sleep(every_s)
        try:
            sock.settimeout(5)
            while sock.recv(1024):
                pass
        except OSError:
            pass
    return time.monotonic() - started


def test_a_trickling_client_is_dropped_at_the_request_deadline() -> None:
    request = b"POST /v1/envs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n" * 40
    stop = threading.Event()
    with EnvServer(RevealEnv, token=TOKEN, request_timeout_s=0.5, read_timeout_s=5) as server:
        # One byte every 0.05 s never trips a per-recv timeout of 5 s; the 0.5 s deadline does.
        took = _trickle(server.port, request, 0.05, stop)
    assert took < 2.0, f"the trickling connection lived {took:.1f}s"


def test_trickling_unauthenticated_connections_are_capped_and_real_clients_get_through() -> None:
    stop = threading.Event()
    question = make_questions(1)[0]
    with EnvServer(
        RevealEnv, token=TOKEN, request_timeout_s=1.0, max_unauthenticated=4, max_client_connections=64
    ) as server:
        threads = [
            threading.Thread(
                target=_trickle, args=(server.port, b"GET /v1/info HTTP/1.1\r\n" * 50, 0.1, stop)
            )
            for _ in range(30)
        ]
        for t in threads:
            t.start()
        time.sleep(0.3)
        assert server.connections.unauthenticated <= 4
        assert threading.active_count() < 30 + 4 + 10  # the evicted ones hold no server thread
        env = RemoteEnv(server.url, token=TOKEN, timeout_s=10)
        env.reset(options={"question": question})
        env.close()
        stop.set()
        for t in threads:
            t.join()
        assert server.connections.evicted > 0  # made room by closing the oldest waiting ones


def _authorized_connection(port: int) -> socket.socket:
    """A keep-alive connection that has sent one authorized request (and read its answer)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(f"GET /v1/info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
    assert sock.recv(65536).startswith(b"HTTP/1.1 200")
    return sock


def test_refusals_of_trickling_clients_are_answered_side_by_side() -> None:
    """Each refused socket is drained for up to 0.2 s after its 503; drained one after another,
    twenty clients that go on trickling bytes would hold the last refusal (a real client's,
    perhaps) for four seconds. (Refused: the address already holds its one connection, an
    authorized one, so there is no waiting connection to close instead.)"""
    stop = threading.Event()
    answered: list[float] = []

    def refused_trickler() -> None:
        started = time.monotonic()
        got = b""
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.setblocking(False)
            while not stop.is_set():  # a byte every 0.05 s, before and after the answer
                with contextlib.suppress(OSError):
                    sock.send(b"G")
                time.sleep(0.05)
                with contextlib.suppress(BlockingIOError, OSError):
                    got += sock.recv(4096)
                if b"503" in got and len(answered) < 20:
                    answered.append(time.monotonic() - started)
                    got = b"seen"

    with (
        EnvServer(RevealEnv, token=TOKEN, max_client_connections=1, request_timeout_s=30) as server,
        _authorized_connection(server.port),  # holds the one place
    ):
        time.sleep(0.2)
        threads = [threading.Thread(target=refused_trickler) for _ in range(20)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 10
        while len(answered) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.set()
        for t in threads:
            t.join()
    assert len(answered) == 20, f"{20 - len(answered)} refused clients got no answer within 10 s"
    assert max(answered) < 1.5, sorted(answered)


def test_connections_per_client_are_capped() -> None:
    with EnvServer(RevealEnv, token=TOKEN, max_client_connections=3) as server:
        socks = [_authorized_connection(server.port) for _ in range(3)]
        try:
            time.sleep(0.2)
            for _ in range(20):  # each refusal arrives as an answer, never as a connection reset
                status, body = _post(server.port, "/v1/envs", b"x" * 5000)
                assert status == 503 and "already holds 3 connections" in json.loads(body)["error"]
        finally:
            for s in socks:
                s.close()
        time.sleep(0.2)
        assert _post(server.port, "/v1/envs")[0] == 200


def _png(width: int, height: int) -> bytes:
    buf = io.BytesIO()
    PILImage.new("1", (width, height)).save(buf, format="PNG")  # a few KiB for millions of pixels
    return buf.getvalue()


def _reset_body(blob: bytes, info: dict[str, Any], seq: int = 1) -> bytes:
    question = make_questions(1)[0]
    blobs = wire.new_blobs("png")
    record = wire.dump_question(question, blobs)
    record["initial_image"] = {"blob": 0}
    head = {"seq": seq, "options": {"question": record}, "blobs": [{**info, "nbytes": len(blob)}]}
    return json.dumps(head).encode() + b"\n" + blob


def test_an_image_is_bounded_by_pixel_count_before_it_is_decoded() -> None:
    with EnvServer(RevealEnv, token=TOKEN) as server:
        key = json.loads(_post(server.port, "/v1/envs")[1])["session"]
        for side in (9000, 20000):
            blob = _png(side, side)
            assert len(blob) < 100 * 2**10
            status, body = _post(server.port, f"/v1/envs/{key}/reset", _reset_body(blob, {"encoding": "png"}))
            assert status == 400, body
            assert f"{side}x{side} pixels" in json.loads(body)["error"]
        raw = {"encoding": "raw", "shape": [100_000, 100_000, 3]}
        status, body = _post(server.port, f"/v1/envs/{key}/reset", _reset_body(b"x" * 30, raw))
        assert status == 400 and "pixels" in json.loads(body)["error"]


def _malformed(key: str) -> list[tuple[str, str, bytes]]:
    """(what, path, body) of requests a client could send by mistake or on purpose."""
    noise = np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)
    buf = io.BytesIO()
    PILImage.fromarray(noise).save(buf, format="PNG")
    ok_png = buf.getvalue()
    base = f"/v1/envs/{key}"
    cases = [
        ("not JSON", f"{base}/step", b"{not json\n"),
        ("a JSON list", f"{base}/step", b"[1, 2]\n"),
        ("deep nesting", f"{base}/step", b"[" * 100_000 + b"\n"),
        ("invalid UTF-8", f"{base}/step", b"\xff\xfe\n"),
        ("no seq", f"{base}/step", b'{"action": {"name": "look"}}\n'),
        ("negative seq", f"{base}/step", b'{"seq": -3, "action": {"name": "look"}}\n'),
        ("seq as text", f"{base}/step", b'{"seq": "7", "action": {"name": "look"}}\n'),
        ("seq as true", f"{base}/step", b'{"seq": true, "action": {"name": "look"}}\n'),
        ("no action", f"{base}/step", b'{"seq": 5}\n'),
        ("action as text", f"{base}/step", b'{"seq": 5, "action": "look"}\n'),
        ("action without a name", f"{base}/step", b'{"seq": 5, "action": {"args": 3}}\n'),
        ("options as a list", f"{base}/reset", b'{"seq": 5, "options": [1]}\n'),
        ("seed as text", f"{base}/reset", b'{"seq": 5, "seed": "x"}\n'),
        ("question as a number", f"{base}/reset", b'{"seq": 5, "options": {"question": 3}}\n'),
        ("question missing fields", f"{base}/reset", b'{"seq": 5, "options": {"question": {"id": 1}}}\n'),
        ("frame ids as text", f"{base}/visual_support", b'{"seq": 5, "frame_ids": "abc"}\n'),
        ("blobs not a list", f"{base}/step", b'{"seq": 5, "blobs": 3}\n'),
        (
            "unknown blob encoding",
            f"{base}/step",
            b'{"seq": 5, "blobs": [{"nbytes": 0, "encoding": "gif"}]}\n',
        ),
        ("blob bytes missing", f"{base}/step", b'{"seq": 5, "blobs": [{"nbytes": 9, "encoding": "png"}]}\n'),
        (
            "truncated png",
            f"{base}/reset",
            _reset_body(ok_png[: len(ok_png) // 2], {"encoding": "png"}, seq=5),
        ),
        ("not a png", f"{base}/reset", _reset_body(b"GIF89a" + b"\0" * 30, {"encoding": "png"}, seq=5)),
        (
            "raw of the wrong size",
            f"{base}/reset",
            _reset_body(b"\0" * 5, {"encoding": "raw", "shape": [2, 2, 3]}, seq=5),
        ),
        (
            "raw of a bad shape",
            f"{base}/reset",
            _reset_body(b"\0" * 4, {"encoding": "raw", "shape": [2, 2]}, seq=5),
        ),
        ("unknown image encoding", f"{base}/step?images=gif", b'{"seq": 5, "action": {"name": "look"}}\n'),
        ("unknown operation", f"{base}/explode", b'{"seq": 5}\n'),
        ("unknown session", "/v1/envs/nope/step", b'{"seq": 5, "action": {"name": "look"}}\n'),
    ]
    return cases


def test_every_malformed_message_gets_a_4xx_with_one_line_and_the_session_survives() -> None:
    question = make_questions(1)[0]
    with EnvServer(RevealEnv, token=TOKEN) as server:
        env = RemoteEnv(server.url, token=TOKEN)
        env.reset(options={"question": question})
        answers = {}
        for what, path, body in _malformed(env.session):
            status, data = _post(server.port, path, body)
            assert 400 <= status < 500, (what, status, data[:300])
            reply = json.loads(data)
            answers[what] = status
            assert 400 <= status < 500, (what, status, reply)
            assert "\n" not in reply["error"] and "Traceback" not in reply["error"], (what, reply)
        env._seq = 100  # the malformed requests above never ran; the session goes on
        assert env.step(Action(name="look")).observation.frame_id == 1
        env.close()
    assert answers["unknown session"] == 404 and answers["unknown operation"] == 404


def test_the_standard_librarys_own_refusals_are_one_line_json() -> None:
    with EnvServer(RevealEnv, token=TOKEN) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(b"BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n")
            reply = b""
            while chunk := sock.recv(4096):
                reply += chunk
        assert reply.startswith(b"HTTP/1.1 501") and b'"error"' in reply
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request("POST", "/v1/envs", headers={**AUTH, "Content-Length": "-5"})
        assert conn.getresponse().status == 411
        conn.close()


def test_seq_is_strict_a_stale_or_reused_number_is_refused_not_run() -> None:
    question = make_questions(1, special={"q000": {"scene": {"reveal_after": 9}}})[0]
    with EnvServer(RevealEnv, token=TOKEN) as server:
        env = RemoteEnv(server.url, token=TOKEN)
        env.reset(options={"question": question})  # seq 1
        first = env.step(Action(name="look"))  # seq 2
        path = f"/v1/envs/{env.session}/step?images=png"
        same = wire.encode({"seq": 2, "action": Action(name="look").model_dump(mode="json")})
        status, data = _post(server.port, path, same)
        assert status == 200  # the lost-reply retry: the saved answer, not a second step
        payload, arrays = wire.decode(data)
        assert wire.load_step(payload["result"], arrays).observation.frame_id == first.observation.frame_id
        other = wire.encode({"seq": 2, "action": {"name": "jump"}})
        status, data = _post(server.port, path, other)
        assert status == 409 and "different request" in json.loads(data)["error"]
        status, data = _post(server.port, path, wire.encode({"seq": 1, "action": {"name": "look"}}))
        assert status == 409 and "stale" in json.loads(data)["error"]
        assert env.step(Action(name="look")).observation.frame_id == 2  # nothing above was run
        env.close()


def test_reference_images_still_travel() -> None:
    question = make_questions(1)[0]
    question.reference_images = [Image.from_array(np.full((4, 6, 3), 7, dtype=np.uint8))]
    with EnvServer(RevealEnv, token=TOKEN, max_pixels=1000) as server:
        env = RemoteEnv(server.url, token=TOKEN)
        env.reset(options={"question": question})
        env.close()
        big = make_questions(1)[0]
        big.reference_images = [Image.from_array(np.zeros((40, 40, 3), dtype=np.uint8))]
        env = RemoteEnv(server.url, token=TOKEN)
        with pytest.raises(EnvError, match=r"HTTP 400.*40x40 pixels"):
            env.reset(options={"question": big})
        env.close()


def test_the_limits_are_in_the_servers_info() -> None:
    with EnvServer(
        RevealEnv,
        token=TOKEN,
        request_timeout_s=7,
        max_pixels=1234,
        max_unauthenticated=5,
        max_client_connections=6,
    ) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request("GET", "/v1/info", headers=AUTH)
        info = wire.ServerInfo.model_validate_json(conn.getresponse().read())
        conn.close()
    assert (
        info.request_timeout_s,
        info.max_pixels,
        info.max_unauthenticated,
        info.max_client_connections,
    ) == (
        7,
        1234,
        5,
        6,
    )

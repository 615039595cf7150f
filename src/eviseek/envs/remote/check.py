"""``eviseek env check URL``: what every env server (ours or an adapter's) must get right.

The check talks to a running server as a client would and reports each promise kept or broken:
the protocol version; refusal of a missing and of a wrong token; refusal of an oversized body and
of a malformed message; a clear answer for an unknown session; then the Env protocol itself
(:func:`eviseek.envs.checker.check_env`) driven through a :class:`RemoteEnv` with each image
encoding (or the one asked for), where png and raw must show the same pixels and jpeg nearly the
same; and sessions closed at the end.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel

from eviseek.envs.remote import wire
from eviseek.envs.remote.client import RemoteEnv, RemoteHttp, server_info
from eviseek.errors import EnvError
from eviseek.types import Question


class CheckResult(BaseModel):
    """One promise of the protocol and whether the server kept it."""

    name: str
    ok: bool
    detail: str = ""


def _expect_status(http: RemoteHttp, method: str, path: str, body: bytes | None, want: int) -> str:
    status, data = http.request(method, path, body, label=path)
    if status != want:
        return f"expected HTTP {want}, got {status}: {data[:200]!r}"
    return ""


# Long because the conformance suite is a list of small checks, each a closure over the server's
# address, token and question, run in the order listed at its end; kept together so the suite
# reads as that list.
def check_server(
    url: str,
    token: str,
    question: Question,
    *,
    timeout_s: float = 120.0,
    encodings: Sequence[str] = wire.ENCODINGS,
) -> list[CheckResult]:
    """Run every check against the server at ``url``; a result per check (none raises).

    ``encodings``: the image encodings the Env protocol is driven with (default every one)."""
    results: list[CheckResult] = []

    def run(name: str, fn: Callable[[], str]) -> None:
        try:
            problem = fn()
        except (EnvError, AssertionError, ValueError) as exc:
            problem = f"{type(exc).__name__}: {exc}"
        results.append(CheckResult(name=name, ok=not problem, detail=problem))

    def info() -> str:
        got = server_info(url, token, timeout_s=timeout_s)
        if got.protocol != wire.PROTOCOL_VERSION:
            return f"protocol {got.protocol}, this client speaks {wire.PROTOCOL_VERSION}"
        if question.env_id and got.env_id and got.env_id != question.env_id:
            return f"serves {got.env_id!r}, the sample question needs {question.env_id!r}"
        return ""

    def refused(bad_token: str) -> Callable[[], str]:
        def fn() -> str:
            http = RemoteHttp(url, bad_token, timeout_s=timeout_s)
            http._headers = {"Authorization": f"Bearer {bad_token}"} if bad_token else {}
            try:
                return _expect_status(http, "GET", "/v1/info", None, 401) or _expect_status(
                    http, "POST", "/v1/envs", b"", 401
                )
            finally:
                http.close()

        return fn

    def oversized() -> str:
        # Only the headers are sent: a server must refuse on Content-Length, without reading.
        import http.client

        limit = server_info(url, token, timeout_s=timeout_s).max_request_bytes
        probe = RemoteHttp(url, token, timeout_s=timeout_s)
        conn = http.client.HTTPConnection(probe.host, probe.port, timeout=timeout_s)
        try:
            conn.putrequest("POST", "/v1/envs/none/step")
            conn.putheader("Authorization", f"Bearer {token}")
            conn.putheader("Content-Length", str(limit + 1))
            conn.endheaders()
            status = conn.getresponse().status
        except (OSError, http.client.HTTPException) as exc:
            return f"the server did not answer an oversized request: {exc}"
        finally:
            conn.close()
        return "" if status == 413 else f"expected HTTP 413, got {status}"

    def unknown_session() -> str:
        http = RemoteHttp(url, token, timeout_s=timeout_s)
        try:
            body = wire.encode({"seq": 1, "action": {"name": "stop"}})
            return _expect_status(http, "POST", "/v1/envs/no-such-session/step", body, 404)
        finally:
            http.close()

    def malformed() -> str:
        env = RemoteEnv(url, token=token, timeout_s=timeout_s)
        try:
            return _expect_status(env.http, "POST", f"/v1/envs/{env.session}/step", b"{not json\n", 400)
        finally:
            env.close()

    def protocol(images: str) -> Callable[[], str]:
        def fn() -> str:
            from eviseek.envs.checker import check_env

            check_env(RemoteEnv(url, token=token, timeout_s=timeout_s, images=images), question)
            return ""

        return fn

    def first_frame(images: str) -> np.ndarray:
        env = RemoteEnv(url, token=token, timeout_s=timeout_s, images=images)
        try:
            obs, _ = env.reset(seed=0, options={"question": question})
            return obs.image.array()
        finally:
            env.close()

    def encodings_agree() -> str:
        png, raw = first_frame("png"), first_frame("raw")
        return "" if np.array_equal(png, raw) else "png and raw images of the same reset differ"

    def jpeg_close() -> str:
        raw, jpeg = first_frame("raw"), first_frame("jpeg")
        if raw.shape != jpeg.shape:
            return f"a jpeg frame is {jpeg.shape}, the raw one {raw.shape}"
        error = float(np.abs(raw.astype(np.int16) - jpeg.astype(np.int16)).mean())
        return "" if error < 12.0 else f"jpeg pixels are {error:.1f} levels off the raw ones on average"

    def closes() -> str:
        before = server_info(url, token, timeout_s=timeout_s).sessions
        env = RemoteEnv(url, token=token, timeout_s=timeout_s)
        env.close()
        after = server_info(url, token, timeout_s=timeout_s).sessions
        if after > before:
            return f"a closed session is still held ({before} sessions before, {after} after)"
        try:
            env.http = RemoteHttp(url, token, timeout_s=timeout_s)
            env._closed = False
            env.legal_actions()
        except EnvError as exc:
            return "" if "404" in str(exc) else f"a call on a closed session failed oddly: {exc}"
        return "a closed session still answered calls"

    run("info: protocol version and env id", info)
    run("a request without a token is refused (401)", refused(""))
    run("a request with a wrong token is refused (401)", refused(token + "-wrong"))
    run("an oversized body is refused (413)", oversized)
    run("an unknown session is reported (404)", unknown_session)
    run("a malformed message is refused (400)", malformed)
    for images in encodings:
        run(f"Env protocol through the server ({images} images)", protocol(images))
    if {"png", "raw"} <= set(encodings):
        run("png and raw images carry the same pixels", encodings_agree)
    if "jpeg" in encodings:
        run("jpeg images are close to the raw pixels", jpeg_close)
    run("a closed session is gone", closes)
    return results


def format_results(results: list[CheckResult]) -> str:
    """One line per check, then a summary line."""
    lines = [
        f"{'ok  ' if r.ok else 'FAIL'} {r.name}" + (f": {r.detail}" if r.detail else "") for r in results
    ]
    failed = sum(not r.ok for r in results)
    lines.append(f"{len(results) - failed}/{len(results)} checks passed")
    return "\n".join(lines)


def results_json(results: list[CheckResult]) -> str:
    """The results as a JSON list."""
    return json.dumps([r.model_dump() for r in results], indent=2)

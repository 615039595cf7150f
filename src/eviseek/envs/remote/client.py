"""``RemoteEnv``: an :class:`~eviseek.envs.Env` whose simulator runs behind an :class:`EnvServer`.

Each ``RemoteEnv`` opens one session on the server and keeps one HTTP/1.1 connection to it.
Every call has a deadline, so a server that dies or stalls mid-episode turns into an
:class:`~eviseek.errors.EnvError` naming the server and the call, never a hang. A connection
that drops between calls (a keep-alive the server timed out) is retried once with the same
sequence number, which the server answers from its saved reply rather than stepping twice.
A server that is full answers 503 ("retry later"); the client waits and retries within the
call's deadline, so more episodes than the server's session cap queue instead of failing.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import time
from typing import Any
from urllib.parse import urlsplit

from eviseek.envs.remote import wire
from eviseek.errors import ConfigError, EnvError
from eviseek.types import Action, ActionSpec, Observation, StepResult


def token_from_env(name: str | None = None) -> str:
    """The shared secret from the environment variable ``name`` (default ``EVISEEK_ENV_TOKEN``)."""
    var = name or wire.TOKEN_ENV
    token = os.environ.get(var, "")
    if not token:
        raise ConfigError(
            f"environment variable {var} is not set: export the env server's token in it "
            "(or name another variable with --env-token-env)"
        )
    return token


def redact_url(url: str) -> str:
    """``url`` safe to print: anything before an ``@`` in its authority and its query are hidden."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = "***@" + authority.rpartition("@")[2]
    shown = f"{scheme}{sep}{authority}{slash}{path}"
    for mark in ("?", "#"):
        if mark in shown:
            shown = shown.split(mark, 1)[0] + mark + "***"
    return shown


def check_env_url(url: str) -> str:
    """An env server's URL checked and normalised to ``http://HOST:PORT``.

    Raises :class:`ConfigError` (one line, never echoing a secret) for an empty value, another
    scheme, a missing host, a bad port, a path, or credentials in the URL: a token written as
    ``http://user:TOKEN@host`` or ``?token=`` would be saved in ``run.json`` and printed in
    errors, so the token only comes from its environment variable.
    """
    text = url.strip()
    shown = redact_url(text)
    if not text:
        raise ConfigError(
            "--env-url is empty: give the env server as http://HOST:PORT (leave the flag out to run "
            "the simulators on this machine)"
        )
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"env server URL {shown!r} is not a valid http://HOST:PORT ({exc})") from None
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            f"env server URL {shown!r} carries credentials: give the token in {wire.TOKEN_ENV} "
            "(or the variable named by --env-token-env), never in the URL, which is saved in run.json"
        )
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise ConfigError(
            f"env server URL {shown!r} has a query or fragment: give only http://HOST:PORT (a token goes "
            f"in {wire.TOKEN_ENV} or the variable named by --env-token-env)"
        )
    if parts.scheme != "http":
        raise ConfigError(
            f"env server URL {shown!r} must start with http:// (the env server speaks plain HTTP; use a "
            "private network or an SSH tunnel)"
        )
    if not parts.hostname:
        raise ConfigError(f"env server URL {shown!r} has no host; give http://HOST:PORT")
    if parts.path not in ("", "/"):
        raise ConfigError(
            f"env server URL {shown!r} has a path ({parts.path}); the server answers at its root, give "
            "only http://HOST:PORT"
        )
    if port == 0:
        raise ConfigError(f"env server URL {shown!r} has port 0; give the port the server listens on")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"http://{host}:{port or 80}"


class EnvServerBusy(EnvError):
    """The env server stayed full (503) for as long as the client was willing to wait."""


class RemoteHttp:
    """One keep-alive HTTP connection to an env server, with the token and a deadline per call."""

    def __init__(self, url: str, token: str, *, timeout_s: float = 300.0) -> None:
        self.url = check_env_url(url)
        parts = urlsplit(self.url)
        if not (timeout_s > 0 and timeout_s < float("inf")):
            raise ConfigError("the env client's timeout must be a positive number of seconds")
        assert parts.hostname is not None and parts.port is not None
        self.host = parts.hostname
        self.port = parts.port
        self.timeout_s = timeout_s
        self._headers = {"Authorization": f"Bearer {token}"}
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
        return self._conn

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        label: str,
        retry: bool = False,
        wait_s: float | None = None,
    ) -> tuple[int, bytes]:
        """Send a request; the status and body. ``retry`` allows one resend on a dropped link.

        A 503 (the server is full, or holds too many connections) is sent again after a short,
        growing pause until ``wait_s`` (default: the timeout) has passed; the request was not
        run, so sending it again is safe. The last 503 is returned when the time is up.
        """
        headers = dict(self._headers)
        if body is not None:
            headers["Content-Type"] = wire.CONTENT_TYPE
        deadline = time.monotonic() + (self.timeout_s if wait_s is None else wait_s)
        pause = 0.05
        while True:
            status, data = self._send_once(method, path, body, headers, label=label, retry=retry)
            left = deadline - time.monotonic()
            if status != 503 or left <= 0:
                return status, data
            # Jitter keeps many waiting clients from retrying in lock step.
            time.sleep(min(left, pause * (0.5 + random.random())))
            pause = min(pause * 2, 1.0)

    def _send_once(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str], *, label: str, retry: bool
    ) -> tuple[int, bytes]:
        for attempt in (0, 1):
            conn = self._connection()
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self.close()
                return response.status, data
            except TimeoutError:
                self.close()
                raise EnvError(
                    f"{label}: the env server at {self.url} gave no answer within {self.timeout_s:g}s"
                ) from None
            except ConnectionRefusedError:
                self.close()
                raise EnvError(
                    f"{label}: the env server at {self.url} refused the connection (is it running?)"
                ) from None
            except (http.client.HTTPException, OSError) as exc:
                self.close()
                if attempt == 0 and retry:
                    continue
                raise EnvError(
                    f"{label}: lost the connection to the env server at {self.url} "
                    f"({type(exc).__name__}: {exc or 'closed'})"
                ) from None
        raise AssertionError("unreachable")

    def json(self, method: str, path: str, *, label: str) -> dict[str, Any]:
        """A JSON request (empty body for POST); raises :class:`EnvError` on a non-200 answer."""
        status, data = self.request(method, path, b"" if method == "POST" else None, label=label)
        if status != 200:
            raise EnvError(f"{label}: {error_text(status, data, self.url)}")
        try:
            out: dict[str, Any] = json.loads(data)
        except json.JSONDecodeError:
            raise EnvError(
                f"{label}: the env server at {self.url} answered something that is not JSON"
            ) from None
        return out


def error_text(status: int, data: bytes, url: str) -> str:
    """A one-line description of an error answer."""
    try:
        message = json.loads(data).get("error") or ""
    except (json.JSONDecodeError, AttributeError, UnicodeDecodeError):
        message = data[:200].decode("utf-8", "replace")
    message = " ".join(str(message).split())[:500]
    hint = ""
    if status == 401:
        hint = " (check the token: the client reads it from EVISEEK_ENV_TOKEN or --env-token-env)"
    elif status == 503:
        hint = " (still full when this call's deadline passed)"
    return f"the env server at {url} answered HTTP {status}: {message}{hint}"


class RemoteEnv:
    """An environment hosted by an env server (implements :class:`~eviseek.envs.Env`).

    Args:
        url: the server, ``http://HOST:PORT``.
        token: the shared secret; default from ``$EVISEEK_ENV_TOKEN``.
        env_id: when given, the server must serve this id (else :class:`ConfigError`).
        timeout_s: deadline of each call.
        wait_s: how long opening a session waits for a free slot on a full server (503) before
            raising :class:`EnvServerBusy`; default ``timeout_s``. ``0`` raises at once, for a
            caller that waits without holding a thread (``eviseek eval`` does).
        images: how the server sends frames: ``png`` (lossless, smaller), ``raw`` (no encoding
            cost; for loopback and fast links) or ``jpeg`` (lossy, smallest; for slow links).
    """

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        env_id: str | None = None,
        timeout_s: float = 300.0,
        images: str = "png",
        wait_s: float | None = None,
    ) -> None:
        if images not in wire.ENCODINGS:
            raise ConfigError(f"images must be one of {', '.join(wire.ENCODINGS)}, not {images!r}")
        self.http = RemoteHttp(url, token if token is not None else token_from_env(), timeout_s=timeout_s)
        self.images = images
        status, data = self.http.request("POST", "/v1/envs", b"", label="open session", wait_s=wait_s)
        if status == 503:
            self.http.close()
            raise EnvServerBusy(f"open session: {error_text(status, data, self.http.url)}")
        if status != 200:
            self.http.close()
            raise EnvError(f"open session: {error_text(status, data, self.http.url)}")
        try:
            opened = wire.OpenedSession.model_validate_json(data)
        except ValueError:
            self.http.close()
            raise EnvError(
                f"open session: the env server at {self.http.url} answered something that is not a session"
            ) from None
        self.session = opened.session
        self.env_id = opened.env_id
        self.supports_visual_support = opened.visual_support
        self._seq = 0
        self._closed = False
        if env_id is not None and env_id != opened.env_id:
            self.close()
            raise ConfigError(
                f"the env server at {self.http.url} serves {opened.env_id!r}, but the questions need "
                f"{env_id!r}; start a server with --env {env_id}"
            )

    def _call(self, op: str, payload: dict[str, Any], blobs: Any = None) -> tuple[dict[str, Any], list[Any]]:
        if self._closed:
            raise EnvError(f"{self.env_id}.{op}: this remote environment is closed")
        self._seq += 1
        body = wire.encode({**payload, "seq": self._seq}, blobs)
        path = f"/v1/envs/{self.session}/{op}?images={self.images}"
        label = f"{self.env_id}.{op}"
        status, data = self.http.request("POST", path, body, label=label, retry=True)
        if status != 200:
            raise EnvError(f"{label}: {error_text(status, data, self.http.url)}")
        return wire.decode(data)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Reset the remote environment (the question's images travel with it)."""
        blobs = wire.new_blobs("png")
        sent = dict(options or {})
        from eviseek.envs.base import question_from_options

        question = question_from_options(sent)
        if question is not None:
            sent["question"] = wire.dump_question(question, blobs)
        payload, arrays = self._call("reset", {"seed": seed, "options": sent}, blobs)
        return wire.load_observation(payload["observation"], arrays), dict(payload.get("info") or {})

    def step(self, action: Action) -> StepResult:
        """One action on the remote environment."""
        payload, arrays = self._call("step", {"action": action.model_dump(mode="json")})
        return wire.load_step(payload["result"], arrays)

    def legal_actions(self) -> list[ActionSpec]:
        """The remote environment's legal actions."""
        payload, _ = self._call("legal_actions", {})
        return wire.load_specs(payload.get("specs"))

    def visual_support(self, frame_ids: list[int]) -> float:
        """Grade frames on the server, where the privileged data lives."""
        if not self.supports_visual_support:
            raise EnvError(f"{self.env_id} does not grade visual support")
        payload, _ = self._call("visual_support", {"frame_ids": list(frame_ids)})
        return float(payload["grade"])

    def close(self) -> None:
        """Close the session on the server (best effort) and the connection."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(EnvError):
            self.http.request("DELETE", f"/v1/envs/{self.session}", label="close session")
        self.http.close()


def server_info(url: str, token: str, *, timeout_s: float = 30.0) -> wire.ServerInfo:
    """``GET /v1/info`` of an env server."""
    http_ = RemoteHttp(url, token, timeout_s=timeout_s)
    try:
        return wire.ServerInfo.model_validate(http_.json("GET", "/v1/info", label="GET /v1/info"))
    finally:
        http_.close()


def preflight(url: str, token_env: str | None = None, *, timeout_s: float = 30.0) -> wire.ServerInfo:
    """Check an env server before a run's first episode: the URL, the token variable and one
    ``GET /v1/info``. Raises :class:`ConfigError` for a bad URL or a missing token and
    :class:`EnvError` (one line) when the server cannot be reached or refuses the token, so a
    run stops at once instead of recording every episode as failed."""
    checked = check_env_url(url)
    token = token_from_env(token_env)
    try:
        return server_info(checked, token, timeout_s=timeout_s)
    except EnvError as exc:
        raise EnvError(f"cannot use the env server (--env-url): {exc}") from None

"""Serve any environment over HTTP so the harness can run on another machine.

:class:`EnvServer` wraps a factory of :class:`~eviseek.envs.Env` objects (a registered id, or any
object that follows the protocol) in the standard library's ``ThreadingHTTPServer``. Each client
episode opens a *session* holding one environment; its calls run one at a time on that
session's own thread.

Routes (every one needs ``Authorization: Bearer <token>``):

* ``GET /v1/info``: protocol version, env id, limits (JSON);
* ``POST /v1/envs``: open a session (JSON :class:`~eviseek.envs.remote.wire.OpenedSession`);
* ``POST /v1/envs/<session>/<op>?images=png|raw`` with ``op`` one of ``reset``, ``step``,
  ``legal_actions``, ``visual_support``: a wire message in, a wire message out;
* ``DELETE /v1/envs/<session>``: close it.

Safety: the token is compared in constant time; bodies over ``max_request_bytes`` are refused
before they are read; reading a request times out (a stalled client cannot hold a thread); an
environment call that runs past ``call_timeout_s`` is answered with 504 and its session is
closed once the call returns. Each request carries a sequence number: a client that lost a reply
(a dropped keep-alive connection) sends the same number again and gets the saved reply instead of
a second step.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from eviseek.envs.base import Env
from eviseek.envs.remote import wire
from eviseek.errors import ConfigError, EnvError
from eviseek.types import Action

logger = logging.getLogger("eviseek.envs.remote")

_OPS = ("reset", "step", "legal_actions", "visual_support")
LOOPBACK = ("127.0.0.1", "::1", "localhost")


class _Session:
    """One environment and the thread its calls run on."""

    def __init__(self, env: Env) -> None:
        self.env = env
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eviseek-env-session")
        self.lock = threading.Lock()
        self.last_used = time.monotonic()
        self.broken = ""
        self.last_seq: int | None = None
        self.last_reply: tuple[int, bytes] | None = None

    def close_later(self) -> None:
        """Close the environment after any call still running on it, without waiting."""

        def close() -> None:
            with contextlib.suppress(Exception):
                self.env.close()

        self.pool.submit(close)
        self.pool.shutdown(wait=False)


class EnvServer:
    """An HTTP server hosting environments made by ``factory`` (see the module docstring).

    Args:
        factory: builds one environment per session.
        env_id: the id clients see; default the first environment's ``env_id``.
        token: the shared secret every request must carry (required, non-empty).
        host, port: where to listen (port 0 picks a free one; see :attr:`port`).
        max_sessions: environments open at once; more are refused with 503.
        max_request_bytes: the largest request body accepted (413 beyond it).
        call_timeout_s: the longest an environment call may take (504 beyond it).
        read_timeout_s: the longest a client may take to send a request, or stay idle on a
            keep-alive connection.
        idle_timeout_s: a session unused this long is closed (its client went away).
    """

    def __init__(
        self,
        factory: Callable[[], Env],
        *,
        token: str,
        env_id: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        max_sessions: int = 64,
        max_request_bytes: int = 16 * 2**20,
        call_timeout_s: float = 300.0,
        read_timeout_s: float = 60.0,
        idle_timeout_s: float = 1800.0,
    ) -> None:
        if not token:
            raise ConfigError(
                f"the env server needs a token: set {wire.TOKEN_ENV} (or the variable named by "
                "--token-env) to a long random secret, and give clients the same value"
            )
        limits = {
            "max_sessions": max_sessions >= 1,
            "max_request_bytes": max_request_bytes >= 1024,
            "call_timeout_s": call_timeout_s > 0,
            "read_timeout_s": read_timeout_s > 0,
            "idle_timeout_s": idle_timeout_s > 0,
        }
        bad = [k for k, ok in limits.items() if not ok]
        if bad:
            raise ConfigError(
                f"env server: out-of-range setting(s) {', '.join(bad)} (timeouts must be positive, "
                "at least one session, requests of at least 1 KiB)"
            )
        self.factory = factory
        self._token = token.encode()
        self.env_id = env_id
        self.max_sessions = max_sessions
        self.max_request_bytes = max_request_bytes
        self.call_timeout_s = call_timeout_s
        self.read_timeout_s = read_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.sessions: dict[str, _Session] = {}
        self._sessions_lock = threading.Lock()
        self._stop = threading.Event()
        handler = type("Handler", (_Handler,), {"server_ref": self, "timeout": read_timeout_s})
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        """The base URL clients use (``http://host:port``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> EnvServer:
        """Serve in background threads (returns at once)."""
        serve = threading.Thread(target=self.httpd.serve_forever, daemon=True, name="eviseek-env-server")
        reap = threading.Thread(target=self._reap, daemon=True, name="eviseek-env-reaper")
        self._threads = [serve, reap]
        for t in self._threads:
            t.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until :meth:`stop` or Ctrl-C."""
        reap = threading.Thread(target=self._reap, daemon=True, name="eviseek-env-reaper")
        reap.start()
        try:
            self.httpd.serve_forever()
        finally:
            self._stop.set()

    def stop(self) -> None:
        """Stop serving and close every session."""
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        with self._sessions_lock:
            sessions = list(self.sessions.values())
            self.sessions.clear()
        for s in sessions:
            s.close_later()

    def __enter__(self) -> EnvServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _reap(self) -> None:
        while not self._stop.wait(min(5.0, self.idle_timeout_s / 2)):
            now = time.monotonic()
            with self._sessions_lock:
                stale = [k for k, s in self.sessions.items() if now - s.last_used > self.idle_timeout_s]
                dropped = [self.sessions.pop(k) for k in stale]
            for s in dropped:
                logger.warning("closing an environment session idle for over %gs", self.idle_timeout_s)
                s.close_later()

    # -- requests ---------------------------------------------------------------------------

    def authorized(self, header: str | None) -> bool:
        """Whether an ``Authorization`` header carries the token (constant-time comparison)."""
        scheme, _, given = (header or "").partition(" ")
        ok = hmac.compare_digest(given.strip().encode(), self._token)
        return scheme.lower() == "bearer" and ok

    def info(self) -> wire.ServerInfo:
        """The server's description."""
        from eviseek import __version__

        return wire.ServerInfo(
            protocol=wire.PROTOCOL_VERSION,
            env_id=self.env_id or "",
            sessions=len(self.sessions),
            max_sessions=self.max_sessions,
            max_request_bytes=self.max_request_bytes,
            call_timeout_s=self.call_timeout_s,
            eviseek_version=__version__,
        )

    def open_session(self) -> wire.OpenedSession:
        """Build an environment for a new session."""
        with self._sessions_lock:
            if len(self.sessions) >= self.max_sessions:
                raise _HttpError(
                    503, f"the server already holds {self.max_sessions} environments; retry later"
                )
        env = self.factory()
        if self.env_id is None:
            self.env_id = env.env_id
        session = _Session(env)
        key = uuid.uuid4().hex
        with self._sessions_lock:
            self.sessions[key] = session
        grades = callable(getattr(env, "visual_support", None))
        return wire.OpenedSession(session=key, env_id=env.env_id, visual_support=grades)

    def close_session(self, key: str) -> None:
        """Close a session (unknown ones are ignored: closing twice is harmless)."""
        with self._sessions_lock:
            session = self.sessions.pop(key, None)
        if session is not None:
            session.close_later()

    def call(self, key: str, op: str, body: bytes, encoding: str) -> tuple[int, bytes]:
        """Run one environment call of a session; the reply status and body."""
        session = self.sessions.get(key)
        if session is None:
            raise _HttpError(404, f"no environment session {key!r} (closed, idle too long, or never opened)")
        payload, arrays = wire.decode(body)
        seq = payload.get("seq")
        with session.lock:
            session.last_used = time.monotonic()
            if session.broken:
                raise _HttpError(410, session.broken)
            if seq is not None and seq == session.last_seq and session.last_reply is not None:
                return session.last_reply  # a retried request whose reply was lost
            future = session.pool.submit(self._run_op, session.env, op, payload, arrays, encoding)
            try:
                reply = future.result(timeout=self.call_timeout_s)
            except FutureTimeout:
                session.broken = (
                    f"an earlier {op} ran past the server's {self.call_timeout_s:g}s call timeout; "
                    "this environment was closed, open a new session"
                )
                self.close_session(key)
                raise _HttpError(504, f"{op} took longer than {self.call_timeout_s:g}s") from None
            session.last_seq, session.last_reply = seq, reply
            session.last_used = time.monotonic()
            return reply

    @staticmethod
    def _run_op(
        env: Env, op: str, payload: dict[str, Any], arrays: list[Any], encoding: str
    ) -> tuple[int, bytes]:
        blobs = wire.new_blobs(encoding)
        try:
            if op == "reset":
                options = dict(payload.get("options") or {})
                if options.get("question") is not None:
                    options["question"] = wire.load_question(options["question"], arrays)
                obs, info = env.reset(seed=payload.get("seed"), options=options or None)
                out: dict[str, Any] = {"observation": wire.dump_observation(obs, blobs), "info": info}
            elif op == "step":
                result = env.step(Action.model_validate(payload["action"]))
                out = {"result": wire.dump_step(result, blobs)}
            elif op == "legal_actions":
                out = {"specs": [s.model_dump(mode="json") for s in env.legal_actions()]}
            elif op == "visual_support":
                grade = getattr(env, "visual_support", None)
                if grade is None:
                    return 501, _error(501, f"{env.env_id} does not grade visual support")
                out = {"grade": float(grade(list(payload.get("frame_ids") or [])))}
            else:  # routing only sends known operations
                return 404, _error(404, f"unknown operation {op!r}")
        except Exception as exc:
            logger.warning("environment %s raised in %s: %s", env.env_id, op, exc)
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            return 500, _error(500, f"{op} raised {detail}", kind=type(exc).__name__)
        return 200, wire.encode(out, blobs)


class _HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _error(status: int, message: str, kind: str = "EnvError") -> bytes:
    return json.dumps(wire.ErrorReply(error=message, type=kind).model_dump()).encode()


class _Handler(BaseHTTPRequestHandler):
    """Routes requests to the :class:`EnvServer` in ``server_ref``."""

    server_ref: EnvServer
    protocol_version = "HTTP/1.1"  # keep-alive: one connection per client environment

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.address_string(), *args)

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _fail(self, status: int, message: str, *, close: bool = False) -> None:
        body = _error(status, message)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if close:  # also sets close_connection: the client must not reuse this connection
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> bytes | None:
        length = self.headers.get("Content-Length")
        limit = self.server_ref.max_request_bytes
        if length is None or not length.isdigit():
            self._fail(411, "a request body needs a Content-Length header", close=True)
            return None
        if int(length) > limit:
            # Not read: the connection is closed instead of draining a huge body.
            self._fail(
                413, f"request body of {length} bytes is over the server's limit of {limit}", close=True
            )
            return None
        return self.rfile.read(int(length))

    def _dispatch(self, method: str) -> None:
        srv = self.server_ref
        if not srv.authorized(self.headers.get("Authorization")):
            self._fail(401, "missing or wrong token (send Authorization: Bearer <token>)", close=True)
            return
        url = urlsplit(self.path)
        parts = [p for p in url.path.split("/") if p]
        try:
            if method == "GET" and parts == ["v1", "info"]:
                self._send(200, srv.info().model_dump_json().encode())
            elif method == "POST" and parts == ["v1", "envs"]:
                if self._body() is None:
                    return
                self._send(200, srv.open_session().model_dump_json().encode())
            elif method == "DELETE" and len(parts) == 3 and parts[:2] == ["v1", "envs"]:
                srv.close_session(parts[2])
                self._send(200, b"{}")
            elif method == "POST" and len(parts) == 4 and parts[:2] == ["v1", "envs"] and parts[3] in _OPS:
                body = self._body()
                if body is None:
                    return
                encoding = (parse_qs(url.query).get("images") or ["png"])[0]
                status, reply = srv.call(parts[2], parts[3], body, encoding)
                self._send(status, reply, wire.CONTENT_TYPE if status == 200 else "application/json")
            else:
                self._fail(404, f"no route {method} {url.path}")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (its own deadline): nobody to answer
        except _HttpError as exc:
            self._fail(exc.status, str(exc))
        except EnvError as exc:  # a malformed message
            self._fail(400, str(exc))
        except Exception as exc:  # building an environment failed, or a bug here
            logger.exception("env server failed on %s %s", method, url.path)
            self._fail(500, f"{type(exc).__name__}: {exc}")

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")


def serve_registered(env_name: str, env_args: dict[str, Any], **kwargs: Any) -> EnvServer:
    """An :class:`EnvServer` for a registered environment id (not started)."""
    from eviseek.envs.registry import make, registered

    if env_name not in registered():
        raise ConfigError(
            f"unknown environment {env_name!r}; registered: {', '.join(registered())} "
            "(a --plugin may register more)"
        )
    return EnvServer(lambda: make(env_name, **env_args), env_id=env_name, **kwargs)

"""Serve any environment over HTTP so the harness can run on another machine.

:class:`EnvServer` wraps a factory of :class:`~eviseek.envs.Env` objects (a registered id, or any
object that follows the protocol) in the standard library's ``ThreadingHTTPServer``. Each client
episode opens a *session* holding one environment; its calls run one at a time on that
session's own thread.

Routes (every one needs ``Authorization: Bearer <token>``):

* ``GET /v1/info``: protocol version, env id, limits (JSON);
* ``POST /v1/envs``: open a session (JSON :class:`~eviseek.envs.remote.wire.OpenedSession`);
* ``POST /v1/envs/<session>/<op>?images=png|raw|jpeg`` with ``op`` one of ``reset``, ``step``,
  ``legal_actions``, ``visual_support``: a wire message in, a wire message out;
* ``DELETE /v1/envs/<session>``: close it.

Limits (docs/scale_in_depth.md lists them with their flags):

* the token is compared in constant time; a request without it gets 401 and its connection is
  closed;
* ``max_sessions`` environments at once, counting those being built: the slot is taken under a
  lock before the build, so simultaneous opens cannot overshoot; more get 503 with
  ``Retry-After`` (:class:`~eviseek.envs.remote.RemoteEnv` waits and retries);
* each request must arrive whole (headers and body) within ``request_timeout_s`` of its first
  byte, and a keep-alive connection may idle ``read_timeout_s`` between requests, so a client
  that trickles bytes cannot hold a thread;
* a new connection must send its first request's headers within ``auth_timeout_s`` (5 s);
  at most ``max_unauthenticated`` connections that have not yet shown the token wait at once
  (``max_unauthenticated_per_client`` from one address), and at a cap the *oldest* waiting one
  is closed to make room, so idle strangers cannot keep a token holder out (see
  :class:`_Connections`); at most ``max_client_connections`` from one address, beyond which a
  newcomer is answered 503 only when none of that address's connections is still waiting;
* images travel as bytes: a reset naming an image by path is refused (400), unless the server
  has an ``asset_root`` (:mod:`eviseek.envs.remote.assets`), and error text names no server path;
* bodies over ``max_request_bytes`` are refused (413) before they are read; images are bounded
  by ``max_pixels`` from their headers, before they are decoded;
* an environment call that runs past ``call_timeout_s`` is answered with 504 and its session is
  closed once the call returns; the call itself stops at its next :func:`eviseek.envs.deadline.check`;
* every malformed request gets a 4xx with a one-line reason (never a traceback).

Each call carries ``seq``, a positive integer growing from call to call: a client that lost a
reply (a dropped keep-alive connection) sends the same number and the same request again and gets
the saved reply instead of a second step; a smaller number, or the same number with a different
request, is refused with 409.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import json
import logging
import math
import queue
import re
import selectors
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from eviseek.envs import deadline
from eviseek.envs.base import Env
from eviseek.envs.remote import wire
from eviseek.envs.remote.assets import AssetRoot
from eviseek.errors import ConfigError, EnvArgumentError, EnvError, SettingError
from eviseek.types import Action

logger = logging.getLogger("eviseek.envs.remote")

_OPS = ("reset", "step", "legal_actions", "visual_support")
LOOPBACK = ("127.0.0.1", "::1", "localhost")
SHUTDOWN_POLL_S = 0.05
"""How often the accepting loop checks for :meth:`EnvServer.stop` (the standard library's
default, 0.5 s, made every stop wait up to half a second)."""


class _Session:
    """One environment and the thread its calls run on."""

    def __init__(self, env: Env) -> None:
        self.env = env
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eviseek-env-session")
        self.lock = threading.Lock()
        self.last_used = time.monotonic()
        self.broken = ""
        self.last_seq = 0
        self.last_request = b""
        """Digest of the request that ``last_seq`` carried (a replay must carry the same)."""
        self.last_reply: tuple[int, bytes] | None = None

    def close_later(self) -> None:
        """Close the environment after any call still running on it, without waiting."""

        def close() -> None:
            with contextlib.suppress(Exception):
                self.env.close()

        self.pool.submit(close)
        self.pool.shutdown(wait=False)


class _Connections:
    """Which connections are open, from which client, and which have shown the token yet.

    A connection that has not sent an authorized request yet cannot be told apart from one that
    never will, so none is *refused* for being unauthenticated: when a cap on them is reached, the
    oldest one is closed to make room (evicted). A token holder sends its request the moment it
    connects and is authorized within milliseconds, while an idle stranger is the oldest waiting,
    so strangers cannot keep a token holder out (refusing newcomers let 32 idle connections lock
    every client out for a minute, and the attacker reconnected). The caps:

    * ``max_unauthenticated`` over all addresses (at the cap, the oldest connection of the address
      holding the most unauthenticated ones goes);
    * ``max_unauthenticated_per_client`` from one address (at the cap, its oldest goes);
    * ``max_per_client`` connections of any kind from one address: at the cap, an unauthenticated
      one of that address goes; only when all are authorized is the newcomer refused (503).
    """

    def __init__(
        self, max_unauthenticated: int, max_per_client: int, max_unauthenticated_per_client: int
    ) -> None:
        self.max_unauthenticated = max_unauthenticated
        self.max_per_client = max_per_client
        self.max_unauthenticated_per_client = max_unauthenticated_per_client
        self.lock = threading.Lock()
        self.open: dict[int, tuple[str, bool]] = {}  # id(socket) -> (client address, authorized)
        self.per_client: dict[str, int] = {}
        self.waiting: dict[str, dict[int, socket.socket]] = {}
        """Unauthenticated sockets by address, oldest first (dicts keep insertion order)."""
        self.unauthenticated = 0
        self.refused = 0
        self.evicted = 0

    def admit(self, conn: Any, client: str) -> str:
        """Register a new connection, evicting waiting ones as needed; the reason to refuse it, or ``""``."""
        victims: list[socket.socket] = []
        with self.lock:
            if self.per_client.get(client, 0) >= self.max_per_client:
                if not self.waiting.get(client):
                    self.refused += 1
                    return (
                        f"{client} already holds {self.max_per_client} connections to this server; "
                        "retry later"
                    )
                victims.append(self._evict(client))
            if len(self.waiting.get(client, {})) >= self.max_unauthenticated_per_client:
                victims.append(self._evict(client))
            if self.unauthenticated >= self.max_unauthenticated:
                victims.append(self._evict(max(self.waiting, key=lambda c: len(self.waiting[c]))))
            self.open[id(conn)] = (client, False)
            self.per_client[client] = self.per_client.get(client, 0) + 1
            self.waiting.setdefault(client, {})[id(conn)] = conn
            self.unauthenticated += 1
        for sock in victims:
            # The handler thread blocked reading it sees the end of the stream and finishes; it
            # then calls forget(), which finds the entry already gone.
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        return ""

    def _evict(self, client: str) -> socket.socket:
        """Unregister the oldest unauthenticated socket of ``client`` (the lock is held)."""
        waiting = self.waiting[client]
        key = next(iter(waiting))
        sock = waiting.pop(key)
        if not waiting:
            del self.waiting[client]
        self.open.pop(key, None)
        self.unauthenticated -= 1
        self._drop_client(client)
        self.evicted += 1
        return sock

    def _drop_client(self, client: str) -> None:
        left = self.per_client.get(client, 1) - 1
        if left > 0:
            self.per_client[client] = left
        else:
            self.per_client.pop(client, None)

    def authorized(self, conn: Any) -> bool:
        """The connection sent the token: it no longer counts as unauthenticated. False when it
        was evicted meanwhile (its socket is shut: nothing can be answered on it)."""
        with self.lock:
            entry = self.open.get(id(conn))
            if entry is None:
                return False
            if not entry[1]:
                self.open[id(conn)] = (entry[0], True)
                self.unauthenticated -= 1
                waiting = self.waiting.get(entry[0], {})
                waiting.pop(id(conn), None)
                if not waiting:
                    self.waiting.pop(entry[0], None)
            return True

    def forget(self, conn: Any) -> None:
        """The connection is closed (a refused or evicted one is no longer registered)."""
        with self.lock:
            entry = self.open.pop(id(conn), None)
            if entry is None:
                return
            client, authorized = entry
            if not authorized:
                self.unauthenticated -= 1
                waiting = self.waiting.get(client, {})
                waiting.pop(id(conn), None)
                if not waiting:
                    self.waiting.pop(client, None)
            self._drop_client(client)


class _Refuser:
    """Answers refused connections with a 503 on one background thread.

    A socket closed while the client's request is still unread makes the kernel send a reset,
    which the client may see instead of the answer ("connection reset" rather than "retry
    later"). So each refused socket gets its answer, a half-close, and a short drain of what the
    client sent (at most :attr:`DRAIN_S`), off the accepting thread. The drains run side by side
    on one selector: answered one after another, thirty clients that trickle a byte every 0.1 s
    held the refusal of the next client, a real one perhaps, for six seconds. When too many
    wait, the rest are simply closed.
    """

    DRAIN_S = 0.2
    """How long a refused socket is read from after its answer, at most."""
    MAX_DRAIN_BYTES = 2**16
    MAX_OPEN = 256
    """Refused sockets queued or draining at once; beyond that they are closed unanswered."""

    def __init__(self) -> None:
        self.queue: queue.Queue[tuple[socket.socket | None, bytes]] = queue.Queue(maxsize=self.MAX_OPEN)
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._wake_write.setblocking(False)
        threading.Thread(target=self._run, daemon=True, name="eviseek-env-refuser").start()

    def refuse(self, sock: socket.socket, answer: bytes) -> bool:
        """Hand ``sock`` over (True), or False when the queue is full (the caller closes it)."""
        try:
            self.queue.put_nowait((sock, answer))
        except queue.Full:
            return False
        self._wake()
        return True

    def stop(self) -> None:
        """End the thread once the refusals already handed over are answered and drained."""
        with contextlib.suppress(queue.Full):
            self.queue.put((None, b""), timeout=1.0)
        self._wake()

    def _wake(self) -> None:
        # A full wake-up buffer already holds a pending wake-up: nothing is lost.
        with contextlib.suppress(BlockingIOError, OSError):
            self._wake_write.send(b"x")

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._wake_read, selectors.EVENT_READ)
        draining: dict[socket.socket, list[float]] = {}  # socket -> [deadline, bytes drained]
        stopping = False
        try:
            while not (stopping and not draining):
                now = time.monotonic()
                for sock in [s for s, (deadline, _) in draining.items() if deadline <= now]:
                    self._close(selector, draining, sock)
                wait = min((d for d, _ in draining.values()), default=now + 1.0) - now
                for key, _ in selector.select(max(0.0, wait) if draining or not stopping else 0.0):
                    ready = key.fileobj
                    if ready is self._wake_read:
                        with contextlib.suppress(OSError):
                            self._wake_read.recv(4096)
                        stopping |= self._take_new(selector, draining)
                        continue
                    if not isinstance(ready, socket.socket) or ready not in draining:
                        continue
                    try:
                        chunk = ready.recv(4096)
                    except OSError:
                        chunk = b""
                    draining[ready][1] += len(chunk)
                    if not chunk or draining[ready][1] >= self.MAX_DRAIN_BYTES:
                        self._close(selector, draining, ready)
        finally:
            for sock in list(draining):
                self._close(selector, draining, sock)
            selector.close()
            self._wake_read.close()
            self._wake_write.close()

    def _take_new(self, selector: selectors.BaseSelector, draining: dict[socket.socket, list[float]]) -> bool:
        """Answer every refused socket handed over since the last call; True once told to stop."""
        stop = False
        while True:
            try:
                sock, answer = self.queue.get_nowait()
            except queue.Empty:
                return stop
            if sock is None:
                stop = True
                continue
            try:
                # The answer is small and the socket's send buffer empty: this does not block.
                sock.settimeout(0.5)
                sock.sendall(answer)
                sock.shutdown(socket.SHUT_WR)
                sock.setblocking(False)
                if len(draining) >= self.MAX_OPEN:
                    raise OSError("too many refused sockets draining")
                selector.register(sock, selectors.EVENT_READ)
            except (OSError, ValueError):
                with contextlib.suppress(OSError):
                    sock.close()
                continue
            draining[sock] = [time.monotonic() + self.DRAIN_S, 0]

    @staticmethod
    def _close(
        selector: selectors.BaseSelector, draining: dict[socket.socket, list[float]], sock: socket.socket
    ) -> None:
        draining.pop(sock, None)
        with contextlib.suppress(KeyError, ValueError, OSError):
            selector.unregister(sock)
        with contextlib.suppress(OSError):
            sock.close()


class _HTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that admits a connection only within the connection limits."""

    daemon_threads = True
    request_queue_size = 128  # the default 5 drops simultaneous connects (clients then wait 1 s)
    connections: _Connections
    refuser: _Refuser
    _handed_over: set[int]
    """Refused sockets the refuser now owns: the server must not close them itself."""

    def verify_request(self, request: Any, client_address: Any) -> bool:
        why = self.connections.admit(request, str(client_address[0]))
        if not why:
            return True
        body = _error(503, why)
        head = (
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
        )
        if self.refuser.refuse(request, head.encode() + body):
            self._handed_over.add(id(request))
        return False

    def shutdown_request(self, request: Any) -> None:
        self.connections.forget(request)
        if id(request) in self._handed_over:
            self._handed_over.discard(id(request))  # the refuser answers and closes it
            return
        super().shutdown_request(request)


class EnvServer:
    """An HTTP server hosting environments made by ``factory`` (see the module docstring).

    Args:
        factory: builds one environment per session.
        env_id: the id clients see; default the first environment's ``env_id``.
        token: the shared secret every request must carry (required, non-empty).
        host, port: where to listen (port 0 picks a free one; see :attr:`port`).
        max_sessions: environments open (or being built) at once; more are refused with 503.
        max_request_bytes: the largest request body accepted (413 beyond it).
        call_timeout_s: the longest an environment call may take (504 beyond it).
        read_timeout_s: the longest a keep-alive connection may stay idle between requests.
        request_timeout_s: the longest a client may take to send one request, headers and body
            together, counted from its first byte (the connection is dropped beyond it).
        idle_timeout_s: a session unused this long is closed (its client went away).
        max_unauthenticated: connections that have not yet sent an authorized request, at once;
            at the cap the oldest of them is closed to make room for the newcomer.
        max_client_connections: connections from one client address at once (503 beyond it, once
            none of them is unauthenticated: those are closed first to make room).
        max_pixels: pixels the images of one request may hold together, checked before decoding.
        auth_timeout_s: how long a new connection may take to send its first request's headers
            (it is closed beyond it): strangers cannot park connections.
        max_unauthenticated_per_client: connections from one address that have not yet sent an
            authorized request, at once; at the cap its oldest such connection is closed.
        asset_root: a folder from which a reset may name images by path (see
            :mod:`eviseek.envs.remote.assets`); ``None`` (the default) refuses every image path.
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
        request_timeout_s: float = 60.0,
        idle_timeout_s: float = 1800.0,
        max_unauthenticated: int = 32,
        max_client_connections: int = 128,
        max_pixels: int = wire.MAX_MESSAGE_PIXELS,
        auth_timeout_s: float = 5.0,
        max_unauthenticated_per_client: int = 8,
        asset_root: str | Path | None = None,
    ) -> None:
        if not token:
            raise ConfigError(
                f"the env server needs a token: set {wire.TOKEN_ENV} (or the variable named by "
                "--token-env) to a long random secret, and give clients the same value"
            )
        _check_limits(
            max_sessions=max_sessions >= 1,
            max_request_bytes=max_request_bytes >= 1024,
            call_timeout_s=_positive(call_timeout_s),
            read_timeout_s=_positive(read_timeout_s),
            request_timeout_s=_positive(request_timeout_s),
            idle_timeout_s=_positive(idle_timeout_s),
            max_unauthenticated=max_unauthenticated >= 1,
            max_client_connections=max_client_connections >= 1,
            max_pixels=max_pixels >= 1,
            auth_timeout_s=_positive(auth_timeout_s),
            max_unauthenticated_per_client=max_unauthenticated_per_client >= 1,
        )
        self.factory = factory
        self._token = token.encode()
        self.env_id = env_id
        self.max_sessions = max_sessions
        self.max_request_bytes = max_request_bytes
        self.call_timeout_s = call_timeout_s
        self.read_timeout_s = read_timeout_s
        self.request_timeout_s = request_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.max_pixels = max_pixels
        self.auth_timeout_s = auth_timeout_s
        self.assets = AssetRoot(asset_root, max_bytes=max_request_bytes) if asset_root is not None else None
        self.sessions: dict[str, _Session] = {}
        self._opening = 0  # sessions whose environment is being built: they hold a slot too
        self.peak_sessions = 0
        """The most sessions held (or being built) at once since the server started."""
        self._sessions_lock = threading.Lock()
        self._stop = threading.Event()
        handler = type("Handler", (_Handler,), {"server_ref": self, "timeout": read_timeout_s})
        self.connections = _Connections(
            max_unauthenticated, max_client_connections, max_unauthenticated_per_client
        )
        self.httpd = _HTTPServer((host, port), handler, bind_and_activate=False)
        self.httpd.connections = self.connections
        self.httpd._handed_over = set()
        try:
            self.httpd.server_bind()
            self.httpd.server_activate()
        except OSError as exc:  # the port is taken, the address is not this machine's...
            self.httpd.server_close()
            raise EnvError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
        except BaseException:
            self.httpd.server_close()
            raise
        self.httpd.refuser = _Refuser()
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
        serve = threading.Thread(
            target=self.httpd.serve_forever,
            kwargs={"poll_interval": SHUTDOWN_POLL_S},
            daemon=True,
            name="eviseek-env-server",
        )
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
            self.httpd.serve_forever(poll_interval=SHUTDOWN_POLL_S)
        finally:
            self._stop.set()

    def stop(self) -> None:
        """Stop serving and close every session."""
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.httpd.refuser.stop()
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
        ok = hmac.compare_digest(given.strip().encode("utf-8", "replace"), self._token)
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
            image_encodings=list(wire.ENCODINGS),
            request_timeout_s=self.request_timeout_s,
            max_pixels=self.max_pixels,
            max_unauthenticated=self.connections.max_unauthenticated,
            max_client_connections=self.connections.max_per_client,
            auth_timeout_s=self.auth_timeout_s,
            max_unauthenticated_per_client=self.connections.max_unauthenticated_per_client,
            asset_root=self.assets is not None,
        )

    def open_session(self) -> wire.OpenedSession:
        """Build an environment for a new session.

        The slot is taken under the lock before the (slow) build starts, so simultaneous opens
        can never hold more than ``max_sessions`` environments between them.
        """
        with self._sessions_lock:
            if len(self.sessions) + self._opening >= self.max_sessions:
                raise _HttpError(
                    503, f"the server already holds {self.max_sessions} environments; retry later"
                )
            self._opening += 1
            self.peak_sessions = max(self.peak_sessions, len(self.sessions) + self._opening)
        try:
            env = self.factory()
        except BaseException:
            with self._sessions_lock:
                self._opening -= 1
            raise
        if self.env_id is None:
            self.env_id = env.env_id
        session = _Session(env)
        key = uuid.uuid4().hex
        with self._sessions_lock:
            self._opening -= 1
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
        """Run one environment call of a session; the reply status and body.

        Every request carries ``seq``, a positive integer that grows from call to call. The same
        ``seq`` with the same request again (a client whose reply was lost) gets the saved reply;
        the same ``seq`` with a different request, or a smaller one, is refused with 409.
        """
        session = self.sessions.get(key)
        if session is None:
            raise _HttpError(404, f"no environment session {key!r} (closed, idle too long, or never opened)")
        if encoding not in wire.ENCODINGS:
            raise _HttpError(
                400, f"unknown image encoding {encoding!r}; use one of {', '.join(wire.ENCODINGS)}"
            )
        payload, arrays = wire.decode(body, max_pixels=self.max_pixels)
        seq = payload.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            raise _HttpError(400, f"every call needs 'seq', a positive integer (got {seq!r})")
        # The request as the server reads it (key order and spacing do not make it different).
        canonical = json.dumps([op, encoding, payload], sort_keys=True, default=repr).encode()
        digest = hashlib.sha256(canonical + b"\n" + body.partition(b"\n")[2]).digest()
        with session.lock:
            session.last_used = time.monotonic()
            if session.broken:
                raise _HttpError(410, session.broken)
            if seq == session.last_seq and session.last_reply is not None:
                if digest != session.last_request:
                    raise _HttpError(
                        409, f"seq {seq} was already used by a different request; number each call anew"
                    )
                return session.last_reply  # a retried request whose reply was lost
            if seq <= session.last_seq:
                raise _HttpError(
                    409, f"seq {seq} is stale: this session has already run seq {session.last_seq}"
                )
            opener = None
            if self.assets is not None:
                decoded = sum(int(a.shape[0]) * int(a.shape[1]) for a in arrays)
                opener = self.assets.opener(self.max_pixels - decoded)
            run = _parse_op(op, payload, arrays, opener)  # a malformed request is refused before it runs
            future = session.pool.submit(self._run_op, session.env, op, run, encoding, self.call_timeout_s)
            try:
                reply = future.result(timeout=self.call_timeout_s)
            except FutureTimeout:
                session.broken = (
                    f"an earlier {op} ran past the server's {self.call_timeout_s:g}s call timeout; "
                    "this environment was closed, open a new session"
                )
                self.close_session(key)
                raise _HttpError(504, f"{op} took longer than {self.call_timeout_s:g}s") from None
            session.last_seq, session.last_request, session.last_reply = seq, digest, reply
            session.last_used = time.monotonic()
            return reply

    @staticmethod
    def _run_op(env: Env, op: str, run: dict[str, Any], encoding: str, timeout_s: float) -> tuple[int, bytes]:
        blobs = wire.new_blobs(encoding)
        try:
            with deadline.running(timeout_s):  # long loops in the env stop once it passes
                return EnvServer._run_op_now(env, op, run, blobs)
        except EnvArgumentError as exc:  # the environment refused the client's options or scene
            return 400, _error(
                400, f"{op} refused its arguments: {_public_error(exc)}", kind=type(exc).__name__
            )
        except Exception as exc:
            logger.warning("environment %s raised in %s: %s", env.env_id, op, wire.first_error(exc))
            return 500, _error(500, f"{op} raised {_public_error(exc)}", kind=type(exc).__name__)

    @staticmethod
    def _run_op_now(env: Env, op: str, run: dict[str, Any], blobs: Any) -> tuple[int, bytes]:
        if op == "reset":
            obs, info = env.reset(seed=run["seed"], options=run["options"])
            out: dict[str, Any] = {"observation": wire.dump_observation(obs, blobs), "info": info}
        elif op == "step":
            result = env.step(run["action"])
            out = {"result": wire.dump_step(result, blobs)}
        elif op == "legal_actions":
            out = {"specs": [s.model_dump(mode="json") for s in env.legal_actions()]}
        else:  # visual_support (routing only sends known operations)
            grade = getattr(env, "visual_support", None)
            if grade is None:
                return 501, _error(501, f"{env.env_id} does not grade visual support")
            out = {"grade": float(grade(run["frame_ids"]))}
        return 200, wire.encode(out, blobs)


def _positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


def _check_limits(**in_range: bool) -> None:
    """Raise :class:`ConfigError` naming every setting whose flag here is False."""
    bad = [name for name, ok in in_range.items() if not ok]
    if bad:
        raise ConfigError(
            f"env server: out-of-range setting(s) {', '.join(bad)} (timeouts must be positive and "
            "finite, counts at least 1, requests of at least 1 KiB)"
        )


MAX_SEED = 2**63 - 1
"""The largest ``seed`` a reset may carry (ours: any int64, which every random generator takes;
a 400-digit seed reached the environment's generator and came back as a 500)."""


def _parse_op(
    op: str, payload: dict[str, Any], arrays: list[Any], open_path: wire.PathOpener | None = None
) -> dict[str, Any]:
    """The checked arguments of one call; a malformed payload is a 400 with one line."""
    try:
        if op == "reset":
            seed = payload.get("seed")
            if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
                raise ValueError(f"seed must be an integer or null, got {str(seed)[:40]!r}")
            if seed is not None and not 0 <= seed <= MAX_SEED:
                raise ValueError(f"seed must be between 0 and 2**63 - 1, got {str(seed)[:40]}")
            options = payload.get("options")
            if options is not None and not isinstance(options, dict):
                raise ValueError("options must be a JSON object")
            options = dict(options or {})
            if options.get("question") is not None:
                if not isinstance(options["question"], dict):
                    raise ValueError("options.question must be a JSON object")
                options["question"] = wire.load_question(options["question"], arrays, open_path)
            return {"seed": seed, "options": options or None}
        if op == "step":
            if not isinstance(payload.get("action"), dict):
                raise ValueError("a step needs 'action', a JSON object")
            return {"action": Action.model_validate(payload["action"])}
        if op == "visual_support":
            frames = payload.get("frame_ids") or []
            if not isinstance(frames, list) or not all(
                isinstance(f, int) and not isinstance(f, bool) for f in frames
            ):
                raise ValueError("frame_ids must be a list of integers")
            return {"frame_ids": list(frames)}
        return {}
    except EnvError as exc:  # an image refused (a path, or over a limit)
        raise _HttpError(400, f"malformed {op} request: {exc}") from None
    except Exception as exc:  # pydantic's ValidationError, a wrong type deep in a record ...
        why = str(exc) if type(exc) is ValueError else wire.first_error(exc)
        raise _HttpError(400, f"malformed {op} request: {why}") from None


class _HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/<])/(?:[^\s/'\"():,]+/)+[^\s/'\"():,]*")


def _public_error(exc: BaseException) -> str:
    """One line about an environment's exception, fit to send to a client: an ``OSError`` by
    its reason alone, and absolute paths in any message replaced by ``<path>`` (the server's
    folders are no business of the client, and naming a file says that it exists)."""
    if isinstance(exc, OSError):
        return f"{type(exc).__name__}: {exc.strerror or 'operating system error'}"
    return _ABSOLUTE_PATH.sub("<path>", wire.first_error(exc))


def _error(status: int, message: str, kind: str = "EnvError") -> bytes:
    line = " ".join(message.split())  # always one line
    return json.dumps(wire.ErrorReply(error=line, type=kind).model_dump()).encode()


class _DeadlineReader(io.RawIOBase):
    """Reads a connection so that each request must arrive whole within its deadline.

    Between requests a keep-alive connection may wait ``idle_s`` for the first byte; from that
    byte on, the request line, headers and body together get ``request_s``, however the client
    trickles them (a per-``recv`` timeout alone lets one byte a second hold a thread forever).
    Until the connection has sent an authorized request, everything it reads must also arrive
    within ``auth_s`` of its accepting: a stranger cannot park a connection for ``idle_s``.
    """

    def __init__(self, sock: socket.socket, idle_s: float, request_s: float, auth_s: float) -> None:
        self.sock = sock
        self.idle_s = idle_s
        self.request_s = request_s
        self.deadline: float | None = None
        self.auth_deadline: float | None = time.monotonic() + auth_s
        """Cleared once the connection sent an authorized request."""

    def readable(self) -> bool:
        return True

    def new_request(self) -> None:
        """The next byte starts a new request's clock."""
        self.deadline = None

    def readinto(self, buffer: Any) -> int:
        now = time.monotonic()
        left = self.idle_s if self.deadline is None else self.deadline - now
        if self.auth_deadline is not None:
            left = min(left, self.auth_deadline - now)
        if left <= 0:
            raise TimeoutError(f"the request did not arrive within {self.request_s:g}s")
        self.sock.settimeout(left)
        n = self.sock.recv_into(buffer)
        if n and self.deadline is None:
            self.deadline = time.monotonic() + self.request_s
        return n


class _Handler(BaseHTTPRequestHandler):
    """Routes requests to the :class:`EnvServer` in ``server_ref``."""

    server_ref: EnvServer
    protocol_version = "HTTP/1.1"  # keep-alive: one connection per client environment

    def setup(self) -> None:
        super().setup()
        # Headers and body are written apart; with Nagle's algorithm on, the body of a kept-alive
        # reply waited for the client's delayed ACK of the headers: 40 ms on Linux, every call.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        srv = self.server_ref
        self._reader = _DeadlineReader(
            self.connection, srv.read_timeout_s, srv.request_timeout_s, srv.auth_timeout_s
        )
        self.rfile = io.BufferedReader(self._reader)
        self._body_read = False

    def handle_one_request(self) -> None:
        self._reader.new_request()
        self._body_read = False
        super().handle_one_request()

    def _unread_body(self) -> bool:
        """Whether the request announced a body that was not read: answering and then reading
        on would take that body for the next request (one request, two answers)."""
        headers = getattr(self, "headers", None)
        if self._body_read or headers is None:
            return False
        length = headers.get("Content-Length")
        return headers.get("Transfer-Encoding") is not None or (
            length is not None and length.strip() not in ("", "0")
        )

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.address_string(), *args)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # The standard library's own refusals (a bad request line, too many headers) as JSON.
        self.close_connection = True
        with contextlib.suppress(OSError):  # an evicted connection's socket is already shut
            self._fail(code, message or self.responses.get(code, ("error",))[0], close=True)

    def _write(self, status: int, body: bytes, content_type: str, close: bool, retry_after: bool) -> None:
        close = close or self._unread_body()
        self.connection.settimeout(self.server_ref.request_timeout_s)  # a client that never reads
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if retry_after:
            self.send_header("Retry-After", "1")
        if close:  # also sets close_connection: the client must not reuse this connection
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self._write(status, body, content_type, False, False)

    def _fail(self, status: int, message: str, *, close: bool = False) -> None:
        self._write(status, _error(status, message), "application/json", close, status == 503)

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
        try:
            body = self.rfile.read(int(length))
        except TimeoutError:
            self._fail(
                408, f"the request did not arrive within {self.server_ref.request_timeout_s:g}s", close=True
            )
            return None
        if len(body) < int(length):
            self.close_connection = True  # the client closed mid-body: nobody to answer
            return None
        self._body_read = True
        return body

    def _dispatch(self, method: str) -> None:
        srv = self.server_ref
        if not srv.authorized(self.headers.get("Authorization")):
            self._fail(401, "missing or wrong token (send Authorization: Bearer <token>)", close=True)
            return
        if not srv.connections.authorized(self.connection):
            self.close_connection = True  # evicted while its request arrived: the socket is shut
            return
        self._reader.auth_deadline = None
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
                images = parse_qs(url.query).get("images") or ["png"]
                status, reply = srv.call(parts[2], parts[3], body, images[0])
                self._send(status, reply, wire.CONTENT_TYPE if status == 200 else "application/json")
            else:
                self._fail(404, f"no route {method} {url.path}")
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True  # the client gave up (its own deadline): nobody to answer
        except _HttpError as exc:
            self._fail(exc.status, str(exc))
        except EnvError as exc:  # a malformed message
            self._fail(400, str(exc))
        except Exception as exc:  # building an environment failed, or a bug here
            logger.error("env server failed on %s %s: %s", method, url.path, wire.first_error(exc))
            self._fail(500, f"the server failed: {_public_error(exc)}")

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
        raise SettingError(
            f"unknown environment {env_name!r}; registered: {', '.join(registered())} "
            "(a --plugin may register more)"
        )
    return EnvServer(lambda: make(env_name, **env_args), env_id=env_name, **kwargs)

"""A lean HTTP/1.1 client for JSON POSTs to a plain-``http://`` server (a local vLLM, SGLang...).

The openai client's HTTP stack (``httpx`` over ``anyio``) costs about 2 ms of CPU per request in
the caller's process, and each request passes through many event-loop rounds (its cancel scopes,
its pool's checks of every connection). With a hundred episodes in flight that is most of the
runner's CPU, and every extra round waits behind every other ready episode. This client writes
the request in one piece on a kept-alive asyncio stream and reads one response: about 0.1 ms of
CPU per request (ours: ``benchmarks/inflight_scale.py``, issue 29).

It does only what a chat-completions call needs: ``POST`` with a JSON body, a response with a
``Content-Length``, a chunked body, or a body that ends when the server closes the connection.
No TLS, no proxies, no redirects, no compression: :func:`plain_http_url` says when a base URL
may use it; everything else goes through the openai client.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

MAX_HEADER_BYTES = 1 << 20
"""The longest status line plus headers a response may have."""


class HttpProtocolError(Exception):
    """The server's response is not HTTP/1.x this client can read."""


@dataclass
class HttpResponse:
    """One response: its status, headers (names lower-cased, in order) and whole body."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The last value of header ``name`` (case-insensitive), or ``None``."""
        name = name.lower()
        value = None
        for key, val in self.headers:
            if key == name:
                value = val
        return value


def plain_http_url(url: str) -> bool:
    """Whether ``url`` may use :class:`PlainHttpPool`: ``http://`` without credentials, and no
    ``HTTP_PROXY``/``ALL_PROXY`` set (the openai client sends through a proxy; this client does
    not, so with one set every request keeps to the openai client)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname or parts.username or parts.password:
        return False
    proxies = urllib.request.getproxies_environment()
    return not (proxies.get("http") or proxies.get("all"))


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @property
    def usable(self) -> bool:
        """Open, and the server has not closed it (an idle server closes kept-alive connections)."""
        reader = self.reader
        return not self.writer.is_closing() and not reader.at_eof() and reader.exception() is None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


class PlainHttpPool:
    """Kept-alive connections to one ``http://HOST:PORT`` server, reused most recent first.

    One pool belongs to one event loop. Connections are opened as requests need them (the
    caller limits how many run at once) and at most ``max_idle`` are kept between requests.
    """

    def __init__(self, base_url: str, *, max_idle: int = 256) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"PlainHttpPool needs an http:// URL, got {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.path = parts.path.rstrip("/")
        default_port = parts.port is None or parts.port == 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = host if default_port else f"{host}:{self.port}"
        self.max_idle = max_idle
        self._idle: list[_Connection] = []
        self._closed = False
        self.opened = 0
        """Connections opened so far (for tests)."""

    async def _connect(self) -> _Connection:
        reader, writer = await asyncio.open_connection(self.host, self.port, limit=MAX_HEADER_BYTES)
        self.opened += 1
        return _Connection(reader, writer)

    def _take(self) -> _Connection | None:
        while self._idle:
            conn = self._idle.pop()
            if conn.usable:
                return conn
            conn.close()
        return None

    def _give_back(self, conn: _Connection) -> None:
        if self._closed or len(self._idle) >= self.max_idle or not conn.usable:
            conn.close()
        else:
            self._idle.append(conn)

    async def post(
        self, path: str, body: bytes, headers: dict[str, str], timeout: float | None
    ) -> HttpResponse:
        """``POST`` ``body`` to the base URL's path plus ``path``; the whole exchange (connecting
        included) must end within ``timeout`` seconds, else :class:`TimeoutError`.

        Raises ``OSError`` (``ConnectionRefusedError`` when nothing listens) when the connection
        fails, :class:`asyncio.IncompleteReadError` when it closes mid-response, and
        :class:`HttpProtocolError` for a response that is not HTTP/1.x.
        """
        if self._closed:
            raise RuntimeError("the HTTP pool is closed")
        lines = [f"POST {self.path}{path} HTTP/1.1", f"Host: {self.host_header}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        async with _deadline(timeout):
            conn = self._take() or await self._connect()
            try:
                conn.writer.write(head + body if len(body) < 65536 else head)
                if len(body) >= 65536:
                    conn.writer.write(body)
                    await conn.writer.drain()
                response, keep = await _read_response(conn.reader)
            except BaseException:
                conn.close()  # a half-used connection is never reused
                raise
        if keep:
            self._give_back(conn)
        else:
            conn.close()
        return response

    async def aclose(self) -> None:
        """Close every idle connection; later requests are refused."""
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        for conn in idle:
            with contextlib.suppress(Exception):
                await conn.writer.wait_closed()


def _deadline(timeout: float | None) -> contextlib.AbstractAsyncContextManager[Any]:
    """A block that must end within ``timeout`` seconds (``None``: no limit), else
    :class:`TimeoutError`. On Python 3.11+ it is ``asyncio.timeout`` itself, with no generator
    around it: one exchange per model call, and each layer costs the event loop's thread."""
    if timeout is None:
        return contextlib.nullcontext()
    if sys.version_info >= (3, 11):
        return asyncio.timeout(timeout)
    return _deadline_310(timeout)  # pragma: no cover - Python 3.10


@contextlib.asynccontextmanager
async def _deadline_310(timeout: float) -> AsyncIterator[None]:  # pragma: no cover - Python 3.10
    task = asyncio.current_task()
    assert task is not None
    fired = False

    def fire() -> None:
        nonlocal fired
        fired = True
        task.cancel()

    handle = asyncio.get_running_loop().call_later(timeout, fire)
    try:
        yield
    except asyncio.CancelledError:
        if fired:
            raise TimeoutError from None
        raise
    finally:
        handle.cancel()


async def _read_response(reader: asyncio.StreamReader) -> tuple[HttpResponse, bool]:
    """One response from ``reader`` and whether its connection may be kept for another."""
    while True:
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            raise HttpProtocolError(f"response headers longer than {MAX_HEADER_BYTES} bytes") from None
        status_line, *header_lines = raw[:-4].decode("latin-1").split("\r\n")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise HttpProtocolError(f"not an HTTP/1.x status line: {status_line[:80]!r}")
        status = int(parts[1])
        headers = []
        for line in header_lines:
            name, sep, value = line.partition(":")
            if not sep:
                raise HttpProtocolError(f"malformed header line: {line[:80]!r}")
            headers.append((name.strip().lower(), value.strip()))
        if 100 <= status < 200:  # an interim response (100 Continue): the real one follows
            continue
        response = HttpResponse(status, headers)
        break
    connection = (response.header("connection") or "").lower()
    keep = "close" not in connection and (parts[0] != "HTTP/1.0" or "keep-alive" in connection)
    encoding = (response.header("transfer-encoding") or "").lower()
    length = response.header("content-length")
    if "chunked" in encoding:
        response.body = await _read_chunked(reader)
    elif length is not None:
        if not length.isdigit():
            raise HttpProtocolError(f"bad Content-Length {length[:40]!r}")
        response.body = await reader.readexactly(int(length))
    elif status in (204, 304):
        response.body = b""
    else:  # the body ends when the server closes the connection
        response.body = await reader.read()
        keep = False
    return response, keep


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size_text = size_line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise HttpProtocolError(f"bad chunk size {size_text[:20]!r}") from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers, then the empty line
                pass
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise HttpProtocolError("a chunk does not end with CRLF")

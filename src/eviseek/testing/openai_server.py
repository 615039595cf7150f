"""A real OpenAI-compatible HTTP server on 127.0.0.1, for tests.

:class:`OpenAITestServer` runs the standard library's ``ThreadingHTTPServer`` in a background
thread and speaks the (non-streaming) chat-completions protocol: ``POST /v1/chat/completions``
and ``GET /v1/models``. A test scripts what it answers and then asserts on what it *received*:

.. code-block:: python

    with OpenAITestServer(["hello", ServerReply.error(429, headers={"Retry-After": "1"})]) as srv:
        client = AsyncOpenAI(base_url=srv.base_url, api_key="k")
        ...
        assert srv.requests[0]["json"]["model"] == "m"

Replies are either a list consumed in order or a handler ``fn(request_json) -> reply``. A reply
is a ``str`` (the assistant's text, wrapped in a normal ``chat.completion`` with usage), a
``dict`` (the whole JSON body, status 200) or a :class:`ServerReply` (status, raw body, headers,
a delay, a dropped connection, token counts).

Mistakes in the *test* (a handler that raises, a list that runs out) are answered with HTTP 500
so the client sees a failure, and are raised again when the ``with`` block exits, so a test can
never pass because of them.

The replies and bodies are in :mod:`eviseek.testing.openai_bodies`, the request readers in
:mod:`eviseek.testing.openai_requests`; this module re-exports both.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import traceback
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from eviseek.testing.openai_bodies import (
    Handler,
    Reply,
    ServerReply,
    chat_completion,
    error_body,
    responses_body,
)
from eviseek.testing.openai_requests import decode_data_url, request_images, request_texts, request_words

__all__ = [
    "OpenAITestServer",
    "ServerReply",
    "chat_completion",
    "decode_data_url",
    "error_body",
    "request_images",
    "request_texts",
    "responses_body",
]


class OpenAITestServer:
    """A real chat-completions server on 127.0.0.1 in a background thread (context manager).

    Args:
        replies: a list of replies consumed in order, or a handler ``fn(request_json) -> reply``
            called for each chat-completions request (possibly from several threads at once).
        models: the ids ``GET /v1/models`` lists.

    Attributes:
        base_url: ``http://127.0.0.1:PORT/v1``, for ``AsyncOpenAI(base_url=...)``.
        requests: every request received, as ``{"method", "path", "headers", "json", "time"}``
            dicts (header names lower-cased; ``json`` is ``None`` for a body that is absent or
            not JSON; ``time`` is ``time.monotonic()`` at arrival), in arrival order.
        max_in_flight: the most chat-completions requests being handled at the same moment.
    """

    def __init__(
        self,
        replies: Iterable[Reply] | Handler = (),
        *,
        models: Iterable[str] = ("test-model",),
    ) -> None:
        self._handler: Handler | None = None
        self._replies: list[Reply] = []
        if callable(replies):
            self._handler = replies
        else:
            self._replies = list(replies)
        self._next = 0
        self.models = list(models)
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> OpenAITestServer:
        """Bind a free port on 127.0.0.1 and start serving."""
        handler_cls = type("_Handler", (_RequestHandler,), {"owner": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_cls)
        httpd.daemon_threads = True
        # Do not wait for handler threads that are still sleeping on a scripted delay.
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port (waits for no pending delay)."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
        if exc_type is None and self.errors:
            raise AssertionError("OpenAITestServer saw test-side errors:\n" + "\n".join(self.errors))

    @property
    def port(self) -> int:
        """The bound port."""
        if self._httpd is None:
            raise RuntimeError("the server is not running; use it as a context manager or call start()")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat-completions requests received, in order."""
        return [r["json"] for r in self.requests if r["path"].endswith("/chat/completions")]

    @property
    def responses_requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of the Responses API requests (``POST /v1/responses``), in order."""
        return [r["json"] for r in self.requests if r["path"].rstrip("/").endswith("/responses")]

    # -- internals ---------------------------------------------------------------------------

    def _record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(entry)

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _reply_for(self, request_json: dict[str, Any]) -> ServerReply:
        try:
            if self._handler is not None:
                raw = self._handler(request_json)
            else:
                with self._lock:
                    if self._next >= len(self._replies):
                        msg = (
                            f"OpenAITestServer ran out of replies: it was given {len(self._replies)} "
                            f"and got request {self._next + 1}"
                        )
                        self.errors.append(msg)
                        return ServerReply.error(500, msg)
                    raw = self._replies[self._next]
                    self._next += 1
        except Exception:
            msg = "handler raised:\n" + traceback.format_exc()
            self.errors.append(msg)
            return ServerReply.error(500, "test handler raised; see the test output")
        if isinstance(raw, ServerReply):
            return raw
        if isinstance(raw, str):
            return ServerReply(text=raw)
        if isinstance(raw, dict):
            return ServerReply(json=raw)
        msg = f"handler returned {type(raw).__name__}; expected str, dict or ServerReply"
        self.errors.append(msg)
        return ServerReply.error(500, msg)

    def _render(self, reply: ServerReply, request_json: dict[str, Any], responses: bool = False) -> bytes:
        if reply.body is not None:
            return reply.body.encode()
        if reply.json_body is not None:
            return json.dumps(reply.json_body).encode()
        text = reply.text or ""
        prompt = request_words(request_json) if reply.prompt_tokens is None else reply.prompt_tokens
        if responses:
            return json.dumps(
                responses_body(
                    text,
                    model=str(request_json.get("model", "test-model")),
                    input_tokens=prompt,
                    output_tokens=reply.completion_tokens,
                    reasoning_tokens=reply.reasoning_tokens,
                    usage=reply.usage,
                    finish_reason=reply.finish_reason,
                )
            ).encode()
        body = chat_completion(
            text,
            model=str(request_json.get("model", "test-model")),
            prompt_tokens=prompt,
            completion_tokens=reply.completion_tokens,
            reasoning_tokens=reply.reasoning_tokens,
            usage=reply.usage,
            finish_reason=reply.finish_reason,
        )
        return json.dumps(body).encode()


class _RequestHandler(BaseHTTPRequestHandler):
    owner: OpenAITestServer
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do

    def setup(self) -> None:
        super().setup()
        # Headers and body are written apart; with Nagle's algorithm on, the body of a kept-alive
        # reply waits for the client's delayed ACK of the headers: 40 ms on Linux, every request.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read .requests instead
        return

    def _headers(self) -> dict[str, str]:
        # Lower-cased names: HTTP header names are case-insensitive and clients differ.
        return {k.lower(): v for k, v in self.headers.items()}

    def _read_json(self) -> tuple[bytes, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return raw, json.loads(raw) if raw else None
        except ValueError:
            return raw, None

    def _send(self, status: int, payload: bytes, headers: dict[str, str], content_type: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except OSError:
            # The client gave up (e.g. its timeout fired during a scripted delay): nothing to do.
            self.close_connection = True

    def do_GET(self) -> None:
        self.owner._record(
            {
                "method": "GET",
                "path": self.path,
                "headers": self._headers(),
                "json": None,
                "time": time.monotonic(),
            }
        )
        if self.path.rstrip("/").endswith("/models"):
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "eviseek-test"}
                for m in self.owner.models
            ]
            self._send(200, json.dumps({"object": "list", "data": data}).encode(), {}, "application/json")
        else:
            self._not_found()

    def do_POST(self) -> None:
        _, body = self._read_json()
        self.owner._record(
            {
                "method": "POST",
                "path": self.path,
                "headers": self._headers(),
                "json": body,
                "time": time.monotonic(),
            }
        )
        route = self.path.rstrip("/")
        responses = route.endswith("/responses")
        if not (route.endswith("/chat/completions") or responses):
            self._not_found()
            return
        if not isinstance(body, dict):
            payload = json.dumps(error_body("request body is not a JSON object", status=400)).encode()
            self._send(400, payload, {}, "application/json")
            return
        if body.get("stream"):
            msg = "OpenAITestServer supports only non-streaming requests (stream=false)"
            self._send(400, json.dumps(error_body(msg, param="stream")).encode(), {}, "application/json")
            return
        owner = self.owner
        owner._enter()
        left = False
        try:
            reply = owner._reply_for(body)
            if reply.delay_s > 0:
                # Interruptible, so closing the server never waits for a long scripted delay.
                owner._stop.wait(reply.delay_s)
            if reply.drop:
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            payload = owner._render(reply, body, responses)
            # The request leaves the in-flight count before its reply is written: once the client
            # has the reply it may send its next request, which must not find this one counted.
            owner._leave()
            left = True
            self._send(reply.status, payload, reply.headers, reply.content_type)
        finally:
            if not left:
                owner._leave()

    def _not_found(self) -> None:
        payload = json.dumps(error_body(f"no route for {self.command} {self.path}", status=404)).encode()
        self._send(404, payload, {}, "application/json")

"""The lean HTTP/1.1 client for plain-http chat servers, against real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from eviseek.models.http1 import HttpProtocolError, PlainHttpPool, plain_http_url
from eviseek.models.openai_compat import OpenAICompatModel
from eviseek.testing import OpenAITestServer
from eviseek.types import ChatMessage

Reply = Callable[[bytes, asyncio.StreamWriter], Awaitable[bool]]
"""Answers one request (its body); returns whether to keep the connection open."""


class RawServer:
    """An asyncio server on 127.0.0.1 whose answers a test writes byte by byte."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.connections = 0
        self.requests: list[tuple[bytes, bytes]] = []
        self.server: asyncio.base_events.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                body = await reader.readexactly(length)
                self.requests.append((head, body))
                if not await self.reply(body, writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"


async def _started(reply: Reply) -> AsyncIterator[RawServer]:
    raw = RawServer(reply)
    raw.server = await asyncio.start_server(raw._serve, "127.0.0.1", 0)
    try:
        yield raw
    finally:
        raw.server.close()


def _respond(status: str, headers: list[str], body: bytes, keep: bool = True) -> Reply:
    async def reply(_: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(
            f"HTTP/1.1 {status}\r\n".encode() + "".join(h + "\r\n" for h in headers).encode() + b"\r\n" + body
        )
        await writer.drain()
        return keep

    return reply


async def test_keeps_one_connection_for_requests_in_turn() -> None:
    body = b'{"ok": 1}'
    reply = _respond("200 OK", ["Content-Type: application/json", f"Content-Length: {len(body)}"], body)
    async for server in _started(reply):
        pool = PlainHttpPool(server.url)
        for i in range(3):
            out = await pool.post("/chat/completions", json.dumps({"n": i}).encode(), {"X-Test": "1"}, 5.0)
            assert out.status == 200 and out.body == body and out.header("CONTENT-TYPE") == "application/json"
        assert server.connections == 1 and pool.opened == 1
        head, sent = server.requests[2]
        assert head.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n") and b"X-Test: 1" in head
        assert json.loads(sent) == {"n": 2}
        await pool.aclose()


async def test_reads_a_chunked_body_and_an_interim_response() -> None:
    chunks = b'4\r\n{"a"\r\n3;ext=1\r\n: 1\r\n1\r\n}\r\n0\r\nX-Trailer: t\r\n\r\n'
    reply = _respond("200 OK", ["Transfer-Encoding: chunked"], chunks)

    async def with_continue(body: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        return await reply(body, writer)

    async for server in _started(with_continue):
        pool = PlainHttpPool(server.url)
        out = await pool.post("/x", b"{}", {}, 5.0)
        assert out.status == 200 and json.loads(out.body) == {"a": 1}
        await pool.post("/x", b"{}", {}, 5.0)  # the connection stays usable after the trailers
        assert server.connections == 1
        await pool.aclose()


async def test_a_body_that_ends_with_the_connection_and_a_closed_connection_are_not_reused() -> None:
    async def until_close(_: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"done": true}')
        return False

    async for server in _started(until_close):
        pool = PlainHttpPool(server.url)
        assert json.loads((await pool.post("/x", b"{}", {}, 5.0)).body) == {"done": True}
        assert json.loads((await pool.post("/x", b"{}", {}, 5.0)).body) == {"done": True}
        assert server.connections == 2
        await pool.aclose()


async def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    body = b"{}"
    async for server in _started(_respond("200 OK", [f"Content-Length: {len(body)}"], body, keep=False)):
        pool = PlainHttpPool(server.url)
        await pool.post("/x", b"{}", {}, 5.0)  # kept: the reply said nothing about closing
        await asyncio.sleep(0.2)  # meanwhile the server closed it
        await pool.post("/x", b"{}", {}, 5.0)
        assert server.connections == 2 and pool.opened == 2
        await pool.aclose()


async def test_timeouts_refusals_drops_and_garbage_raise() -> None:
    async def silent(_: bytes, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(1.0)
        return False

    async def drop(_: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{")
        return False

    async for server in _started(silent):
        with pytest.raises(TimeoutError):
            await PlainHttpPool(server.url).post("/x", b"{}", {}, 0.3)
    async for server in _started(drop):
        with pytest.raises(asyncio.IncompleteReadError):
            await PlainHttpPool(server.url).post("/x", b"{}", {}, 5.0)
    async for server in _started(_respond("200 OK", ["Content-Length: x"], b"")):
        with pytest.raises(HttpProtocolError, match="Content-Length"):
            await PlainHttpPool(server.url).post("/x", b"{}", {}, 5.0)
        closed = server.url
    with pytest.raises(ConnectionRefusedError):
        await PlainHttpPool(closed).post("/x", b"{}", {}, 5.0)


async def test_garbage_instead_of_a_status_line() -> None:
    async def garbage(_: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")
        return False

    async for server in _started(garbage):
        with pytest.raises(HttpProtocolError, match=r"not an HTTP/1\.x status line"):
            await PlainHttpPool(server.url).post("/x", b"{}", {}, 5.0)


def test_only_plain_http_without_a_proxy_uses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert plain_http_url("http://127.0.0.1:8000/v1")
    assert not plain_http_url("https://api.openai.com/v1")
    assert not plain_http_url("http://user:pw@127.0.0.1:8000/v1")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    assert not plain_http_url("http://127.0.0.1:8000/v1")


async def test_the_openai_provider_sends_plain_http_chat_requests_through_it() -> None:
    with OpenAITestServer(["one", "two"]) as srv:
        model = OpenAICompatModel.from_spec(
            "test-vlm", base_url=srv.base_url, api_key="sk-test-not-a-real-key"
        )
        assert (await model.generate([ChatMessage.user("hi")])).text == "one"
        assert (await model.generate([ChatMessage.user("again")])).text == "two"
        pool = model._pool()
        assert pool is not None and pool.opened == 1  # one kept-alive connection for both
        headers = srv.requests[1]["headers"]
        assert headers["authorization"] == "Bearer sk-test-not-a-real-key"
        assert headers["content-type"] == "application/json"
        assert srv.chat_requests[1]["model"] == "test-vlm"
        await model.aclose()
        assert not model._pools


async def test_the_responses_api_and_a_proxy_keep_to_the_openai_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert (
        OpenAICompatModel.from_spec(
            "m", base_url="http://127.0.0.1:1/v1", api="responses", api_key="k"
        )._pool()
        is None
    )
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    assert OpenAICompatModel.from_spec("m", base_url="http://127.0.0.1:1/v1", api_key="k")._pool() is None


async def test_transport_openai_keeps_every_request_to_the_openai_client() -> None:
    with OpenAITestServer(["one"]) as srv:
        model = OpenAICompatModel.from_spec(
            "test-vlm", base_url=srv.base_url, api_key="sk-test-not-a-real-key", transport="openai"
        )
        assert model._pool() is None
        assert (await model.generate([ChatMessage.user("hi")])).text == "one"
        assert not model._pools  # no lean connection was opened
        assert srv.requests[0]["headers"]["user-agent"].startswith("AsyncOpenAI")
        await model.aclose()

"""``openai/<model>``: any OpenAI-compatible chat-completions server.

One provider covers OpenAI itself, vLLM, SGLang, Ollama and Gemini's compatible endpoint, all
through the official ``openai`` client (``AsyncOpenAI``). What this module adds on top:

* **Images** become base64 data URLs (PNG, or JPEG when asked), first shrunk to a pixel budget
  with the aspect ratio kept (:mod:`eviseek.models.wire_images`). Small images are never enlarged.
* **A retry policy of our own** (:mod:`eviseek.models.retry`; the client's built-in retries are
  switched off so the policy is visible and testable): exponential backoff with jitter on 429,
  408/409, 5xx, timeouts, dropped connections and bodies that are not valid JSON, honouring
  ``Retry-After`` up to a cap. 400, 401, 403 and 404 are not retried: they raise
  :class:`~eviseek.errors.ModelConfigError` with a one-line message saying what to check.
* **Rejected parameters**: reasoning models refuse e.g. ``temperature``; a 400 that names a
  parameter we sent drops it (remembered for later calls), retries once, and says so in
  ``Completion.notes`` and the log.
* **A per-process concurrency limit** per base URL that adapts: a 429 halves it and pauses every
  request to that server, successes grow it back (:mod:`eviseek.models.ratelimit`); a rate-limit
  storm slows the run instead of failing episodes.
* **Usage** exactly as the server reports it; a server that reports none gives ``None``
  (unknown), never 0.
* **The API key** never appears in a log line, an exception message or a record: every text
  that leaves this module, the model's reply included, is passed through
  :meth:`OpenAICompatModel._redact`.

``GenerateConfig.stage``, ``response_schema`` and ``metadata`` are for eviseek's own readers and
are never sent.

This module holds the client and the call loop; the formats it converts to and from are in
:mod:`eviseek.models.openai_wire` and the reading of a server's refusals in
:mod:`eviseek.models.openai_errors`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from eviseek.errors import ConfigError, ModelConfigError
from eviseek.models.http1 import HttpProtocolError, HttpResponse, PlainHttpPool, plain_http_url
from eviseek.models.openai_errors import config_message, refused_params, server_message
from eviseek.models.openai_settings import OpenAISettings
from eviseek.models.openai_wire import (
    REASONING_EFFORTS,
    chat_messages,
    responses_completion,
    responses_input,
    responses_params,
    sampling_params,
    usage_of,
)
from eviseek.models.ratelimit import request_limit
from eviseek.models.remote import RemoteModel
from eviseek.models.retry import (
    Failure,
    connection_refused,
    parse_retry_after,
    root_cause,
)
from eviseek.models.wire_images import DEFAULT_MAX_PIXELS, data_url_ready, fit_pixels, image_data_url
from eviseek.types import ChatMessage, Completion, GenerateConfig, Image

__all__ = [
    "DEFAULT_MAX_PIXELS",
    "REASONING_EFFORTS",
    "OpenAICompatModel",
    "fit_pixels",
    "image_data_url",
    "request_limit",
    "responses_input",
    "responses_params",
    "usage_of",
]

logger = logging.getLogger("eviseek.models.openai")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "EMPTY"
"""Sent when no key is configured and the server is not OpenAI's: local servers ignore it, but
the client refuses to start without one."""


REQUESTS_PER_CLIENT = 16
"""Requests in flight per HTTP client (and its connection pool) of one ``openai/`` model."""


async def post_chat_completion(
    client: Any, model: str, messages: list[dict[str, Any]], timeout: float, params: dict[str, Any]
) -> Any:
    """``POST /chat/completions`` through the openai client, without its parameter transform.

    ``chat.completions.create`` first walks the whole body against its typed-dict description
    (every message part, every data URL) to apply renames that chat messages never have: about
    0.6 ms of CPU per request with one image (ours, measured on this project's machine), a fifth
    of the harness's own cost per episode at many episodes in flight. The body here is plain
    JSON already, so it goes to the client's ``post`` as it is; the client still builds, sends
    and parses the ``ChatCompletion``, and raises the same errors. ``extra_body`` is merged into
    the body by the client, as ``create`` does.
    """
    from openai.types.chat import ChatCompletion

    rest = dict(params)
    options: dict[str, Any] = {"timeout": timeout}
    extra_body = rest.pop("extra_body", None)
    if extra_body:
        options["extra_json"] = extra_body
    body = {"model": model, "messages": messages, **rest}
    return await client.post("/chat/completions", body=body, cast_to=ChatCompletion, options=options)


def encode_chat_request(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> bytes:
    """The JSON body of a chat-completions request (``extra_body`` merged in, as the client does)."""
    rest = dict(params)
    extra_body = rest.pop("extra_body", None)
    body = {"model": model, "messages": messages, **rest, **(extra_body or {})}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def decode_chat_reply(client: Any, reply: HttpResponse, url: str) -> Any:
    """What the openai client makes of ``reply``: its own exception for a failed status
    (``client`` builds it, so 429, 5xx, 400 and the rest are told apart exactly as before), the
    text of a body that is not JSON, or a ``ChatCompletion`` (built leniently when a server adds
    or omits fields, as the client does). A JSON body that does not parse raises
    ``json.JSONDecodeError``."""
    import httpx2
    from openai.types.chat import ChatCompletion

    if not 200 <= reply.status < 300:
        request = httpx2.Request("POST", url)
        response = httpx2.Response(reply.status, headers=reply.headers, content=reply.body, request=request)
        raise client._make_status_error_from_response(response)
    content_type = (reply.header("content-type") or "*").split(";")[0].strip()
    if not content_type.endswith("json"):
        try:  # as the client does: a JSON body under another content type still counts
            data = json.loads(reply.body)
        except ValueError:
            return reply.body.decode("utf-8", errors="replace")  # not a chat completion
    else:
        data = json.loads(reply.body)
    if not isinstance(data, dict):
        return data
    try:
        return ChatCompletion.model_validate(data)
    except ValueError:  # pydantic's ValidationError: keep what the server sent, as the client does
        return ChatCompletion.construct(**data)


async def post_chat_plain(
    pool: PlainHttpPool,
    client: Any,
    headers: dict[str, str],
    model: str,
    messages: list[dict[str, Any]],
    timeout: float,
    params: dict[str, Any],
) -> Any:
    """``POST /chat/completions`` on a plain-``http://`` server through ``pool``
    (:mod:`eviseek.models.http1`), raising what the openai client raises for the same outcome:
    see :func:`decode_chat_reply`; a timeout is ``APITimeoutError``; a refused, dropped or
    garbled connection is ``APIConnectionError`` with the cause chained.
    """
    import httpx2
    import openai

    url = f"http://{pool.host_header}{pool.path}/chat/completions"
    body = encode_chat_request(model, messages, params)
    try:
        reply = await pool.post("/chat/completions", body, headers, timeout)
    except TimeoutError:
        raise openai.APITimeoutError(request=httpx2.Request("POST", url)) from None
    except (OSError, asyncio.IncompleteReadError, HttpProtocolError) as exc:
        raise openai.APIConnectionError(request=httpx2.Request("POST", url)) from exc
    return decode_chat_reply(client, reply, url)


@dataclass
class _Request:
    """One call's request as the retry loop resends it: the converted messages, the sampling
    settings, and what the server refused during this call (so a parameter is dropped once)."""

    client: Any
    wire_messages: list[dict[str, Any]]
    cfg: GenerateConfig
    params: dict[str, Any] = field(default_factory=dict)
    """The optional parameters of the latest attempt (a 400 naming one of them drops it)."""
    dropped: set[str] = field(default_factory=set)


class OpenAICompatModel(RemoteModel[_Request]):
    """A model served behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    Retries and the shared rate limit come from :class:`~eviseek.models.remote.RemoteModel`;
    this class holds the wire formats: two sends (chat completions, through the openai client or
    the lean HTTP/1.1 one, and the Responses API) and the reading of the openai client's errors.

    ``model`` is the server's model name (``gpt-4o-mini``, ``Qwen/Qwen3-VL-8B-Instruct``...);
    ``settings`` is one :class:`~eviseek.models.openai_settings.OpenAISettings`, checked there
    once (``OpenAISettings.parse``; the registry builds it from ``--model-arg`` pairs,
    ``--base-url`` and ``--api-key-env``, and :meth:`from_spec` from keyword arguments). Its
    fields:

        base_url: the server's URL ending in ``/v1``; default ``$OPENAI_BASE_URL`` or OpenAI's.
        api_key: the key; default ``$OPENAI_API_KEY``. Without one, servers other than
            api.openai.com get the placeholder ``EMPTY`` (local servers need none).
        timeout_s: seconds per attempt (``GenerateConfig.timeout_s`` overrides it per call).
        retry: the :class:`~eviseek.models.retry.RetryPolicy` (its fields may be given flat):
            ``max_retries`` after a transient failure (429, 5xx, timeout, dropped connection,
            invalid body); ``max_connect_retries`` when the connection is refused (a server that
            is down rarely comes back within a backoff, so this is kept short);
            ``backoff_base_s``, ``backoff_max_s`` (the n-th retry waits ``min(max, base * 2**n)``
            times a random factor in [0.5, 1]); ``retry_after_cap_s``, the longest
            ``Retry-After`` honoured; ``max_throttled_s``, how long one call may wait out 429s
            (which do not count against ``max_retries``).
        max_concurrency: requests in flight at once to this base URL, per process; a 429 cuts
            it for the whole process (halved, then regrown one by one: see
            :mod:`eviseek.models.ratelimit`).
        max_pixels: pixel budget per image (``None``: send as is).
        image_format: ``png`` (lossless) or ``jpeg`` (smaller); ``jpeg_quality`` for the latter.
        default_config: sampling defaults; a call's own ``GenerateConfig`` fields override them.
        reasoning_effort: sent as ``reasoning_effort`` (OpenAI reasoning models; the Responses
            API gets ``reasoning: {effort}``), e.g. ``low``; unset: the server's default.
        thinking_budget: thinking tokens allowed per call on Gemini's OpenAI-compatible endpoint
            (sent as its ``extra_body.google.thinking_config.thinking_budget``; the EviSeek paper
            ran Gemini 3.1 Pro with 512); unset: the server's default.
        api: ``chat`` (``/chat/completions``) or ``responses`` (``/responses``, OpenAI's
            Responses API; the paper's support judge ran there with low reasoning effort).
    """

    provider = "openai"
    logger = logger
    settings: OpenAISettings

    def __init__(self, model: str, settings: OpenAISettings | None = None) -> None:
        if not model:
            raise ConfigError("openai/<model> needs a model name after 'openai/', e.g. openai/gpt-4o-mini")
        if settings is None:
            settings = OpenAISettings.parse(f"openai/{model}")
        default_url = os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        super().__init__(model, settings, default_base_url=default_url)
        url = self.base_url
        key = settings.api_key if settings.api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not key:
            if urlsplit(url).hostname == "api.openai.com":
                raise ModelConfigError(
                    f"no API key for {url}: export OPENAI_API_KEY, or name the variable that holds "
                    "the key with --api-key-env"
                )
            key = PLACEHOLDER_KEY
        self._api_key = key
        self.max_pixels = settings.max_pixels
        self.image_format = settings.image_format
        self.jpeg_quality = settings.jpeg_quality
        self.default_config = settings.default_config or GenerateConfig()
        self.reasoning_effort = settings.reasoning_effort
        self.thinking_budget = settings.thinking_budget
        self.api = settings.api
        # Parameters the server refused once: not sent again by this instance.
        self.dropped_params: set[str] = set()
        self._renamed: dict[str, str] = {}
        # An AsyncOpenAI client (and its connection pool) belongs to one event loop.
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Any]] = (
            weakref.WeakKeyDictionary()
        )
        self._turn = 0
        # Chat completions to a plain-http server (no proxy) skip the openai client's HTTP stack:
        # see eviseek.models.http1. The client is still made, to build errors exactly as before.
        self._plain = self.api == "chat" and settings.transport == "auto" and plain_http_url(url)
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, PlainHttpPool] = (
            weakref.WeakKeyDictionary()
        )
        self._plain_headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "eviseek (openai-compatible)",
            "Authorization": f"Bearer {key}",
        }

    @classmethod
    def from_spec(cls, name: str, settings: OpenAISettings | None = None, **kwargs: Any) -> OpenAICompatModel:
        """Registry factory for ``openai/<name>``: ``settings``, or keyword arguments parsed into
        :class:`OpenAISettings` (given both, the keyword arguments go over ``settings``)."""
        if kwargs or settings is None:
            given = settings.model_dump(exclude_unset=True) if settings is not None else {}
            settings = OpenAISettings.parse(f"openai/{name}", **{**given, **kwargs})
        return cls(name, settings)

    # -- helpers -----------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """``text`` with the API key (and a bearer header carrying it) replaced by ``***``."""
        if self._api_key and self._api_key != PLACEHOLDER_KEY:
            text = text.replace(self._api_key, "***")
        return text

    def _redact(self, text: str) -> str:
        return self.redact(text)

    def _one_line(self, text: str, limit: int = 300) -> str:
        return self.one_line(text, limit)

    def _client(self) -> Any:
        """An HTTP client of the running event loop, taken in turn from a few.

        One client per :data:`REQUESTS_PER_CLIENT` requests in flight (``max_concurrency``): the
        HTTP connection pool under each client looks at every one of its connections whenever a
        request starts or ends, so one pool of 256 connections costs the driver 256 checks per
        request (a quarter of its CPU at 128 in flight, measured with
        ``benchmarks/inflight_scale.py --profile``); pools of 16 cost 16."""
        loop = asyncio.get_running_loop()
        clients = self._clients.setdefault(loop, [])
        wanted = 1 if self._plain else max(1, math.ceil(self.max_concurrency / REQUESTS_PER_CLIENT))
        self._turn = (self._turn + 1) % wanted
        while len(clients) <= self._turn:
            from openai import AsyncOpenAI

            # max_retries=0: retries are ours (see _generate), so they are logged and testable.
            clients.append(
                AsyncOpenAI(
                    base_url=self.base_url, api_key=self._api_key, max_retries=0, timeout=self.timeout_s
                )
            )
        return clients[self._turn]

    def _pool(self) -> PlainHttpPool | None:
        """The running loop's connections for chat completions on a plain-http server, or
        ``None`` when requests go through the openai client (https, a proxy, the Responses API)."""
        if not self._plain:
            return None
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            pool = self._pools[loop] = PlainHttpPool(self.base_url, max_idle=max(16, self.max_concurrency))
        return pool

    async def aclose(self) -> None:
        """Close the HTTP clients of the running event loop (others close with their loop)."""
        loop = asyncio.get_running_loop()
        pool = self._pools.pop(loop, None)
        if pool is not None:
            await pool.aclose()
        for client in self._clients.pop(loop, []):
            await client.close()

    def to_openai_messages(self, messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        """The chat-completions ``messages`` for ``messages``: images as data URLs, in order."""
        return chat_messages(
            messages, max_pixels=self.max_pixels, fmt=self.image_format, quality=self.jpeg_quality
        )

    def _wire_ready(self, image: Image) -> bool:
        return data_url_ready(
            image, max_pixels=self.max_pixels, fmt=self.image_format, quality=self.jpeg_quality
        )

    def request_params(self, config: GenerateConfig, *, apply_drops: bool = True) -> dict[str, Any]:
        """The optional request parameters for ``config`` (never stage, schema or metadata).

        With ``apply_drops`` (the default) parameters the server refused earlier are left out
        and renamed ones carry their new name.
        """
        params = sampling_params(
            config,
            reasoning_effort=self.reasoning_effort,
            thinking_budget=self.thinking_budget,
            responses=self.api == "responses",
        )
        if not apply_drops:
            return params
        for old, new in self._renamed.items():
            if old in params:
                params[new] = params.pop(old)
        for name in self.dropped_params:
            params.pop(name, None)
        return params

    # -- the call ----------------------------------------------------------------------------

    async def generate(
        self, messages: Sequence[ChatMessage], config: GenerateConfig | None = None
    ) -> Completion:
        """Send one chat-completions request (with retries) and return the reply.

        Raises :class:`ModelConfigError` for a request the server refuses (400/401/403/404) and
        :class:`ModelError` when the server is unreachable or retries run out.
        """
        cfg = self.default_config.merged(config)
        client = self._client()  # first use imports openai (~1 s): keep that out of the latency
        start = time.perf_counter()
        pictures = [image for m in messages for image in m.images()]
        images = len(pictures)
        if any(not self._wire_ready(image) for image in pictures):
            # Encoding megapixel images takes 0.1-1 s: keep the event loop free meanwhile.
            wire_messages = await asyncio.to_thread(self.to_openai_messages, messages)
        else:
            # Every frame's bytes are at hand (env workers encode the frames they make): only
            # base64 is left, and a hop to a thread and back would cost the episode two rounds of
            # a busy event loop.
            wire_messages = self.to_openai_messages(messages)
        timeout = cfg.timeout_s or self.timeout_s
        notes: list[str] = []
        already_dropped = sorted(self.dropped_params & set(self.request_params(cfg, apply_drops=False)))
        if already_dropped:
            notes.append(f"not sent (refused earlier by the server): {', '.join(already_dropped)}")
        response = await self.call(_Request(client, wire_messages, cfg), timeout=timeout, notes=notes)
        if self.api == "responses":
            return responses_completion(
                response,
                images=images,
                latency_s=time.perf_counter() - start,
                model=self.name,
                notes=notes,
                redact=self._redact,
            )

        choice = response.choices[0]
        text = choice.message.content
        if text is None:
            refusal = getattr(choice.message, "refusal", None)
            why = f" (refusal: {self._one_line(refusal)})" if refusal else ""
            notes.append("the reply had no text content" + why)
            text = ""
        # A server that echoes the key (or a model that was told it) must not carry it into
        # trajectories, the results store or `models check` output.
        text = self._redact(text)
        usage = usage_of(response.usage, images)
        return Completion(
            text=text,
            usage=usage,
            latency_s=time.perf_counter() - start,
            model=self.name,
            finish_reason=choice.finish_reason,
            notes=notes,
        )

    # -- the two sends and the reading of their outcomes ------------------------------------

    async def send(self, request: _Request, timeout: float) -> Any:
        """One attempt: the Responses API's ``POST /responses``, or ``POST /chat/completions``
        (through the lean HTTP/1.1 client on a plain-http server, else the openai client)."""
        params = request.params = self.request_params(request.cfg)
        logger.debug(
            "POST %s/%s model=%s messages=%d params=%s",
            self.base_url,
            "responses" if self.api == "responses" else "chat/completions",
            self.model,
            len(request.wire_messages),
            sorted(params),
        )
        if self.api == "responses":
            return await self._send_responses(request, timeout, params)
        if (pool := self._pool()) is not None:
            return await post_chat_plain(
                pool, request.client, self._plain_headers, self.model, request.wire_messages, timeout, params
            )
        return await post_chat_completion(request.client, self.model, request.wire_messages, timeout, params)

    async def _send_responses(self, request: _Request, timeout: float, params: dict[str, Any]) -> Any:
        """The second send: OpenAI's Responses API, with the chat messages converted to its input."""
        return await request.client.responses.create(
            model=self.model, input=responses_input(request.wire_messages), timeout=timeout, **params
        )

    def check_reply(self, reply: Any) -> Failure | None:
        """A reply that is not a chat completion (or Responses API response) is retried."""
        if self.api == "responses":
            if getattr(reply, "output", None) is not None:
                return None
            return Failure("a reply that is not a Responses API response (no output)")
        if isinstance(reply, str) or not getattr(reply, "choices", None):
            return Failure("a reply that is not a chat completion (no choices)")
        return None

    def failure_of(self, exc: Exception, request: _Request, notes: list[str]) -> Failure | None:
        """The openai client's exceptions: 408/409/429/5xx, timeouts, dropped connections and
        bodies that are not JSON are transient; a 400 naming a parameter we sent drops it and
        resends at once; other statuses raise :class:`ModelConfigError` with what to check."""
        import openai

        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            message = self._one_line(server_message(exc))
            if status == 400:
                refused = refused_params(exc, message, request.params, request.dropped)
                if refused:
                    self._drop(refused, message, notes)
                    request.dropped.update(refused)
                    return None
            if status in (408, 409, 429) or status >= 500:
                retry_after = parse_retry_after(exc.response.headers)
                return Failure(f"HTTP {status}: {message}", retry_after, throttled=status == 429)
            raise ModelConfigError(config_message(status, message, base_url=self.base_url, model=self.model))
        if isinstance(exc, openai.APITimeoutError):
            return Failure(f"no answer within {request.cfg.timeout_s or self.timeout_s:g}s (timeout)")
        if isinstance(exc, openai.APIConnectionError):
            if connection_refused(exc):
                return Failure("connection refused", refused=True)
            return Failure(f"connection dropped ({self._one_line(root_cause(exc))})")
        if isinstance(exc, (json.JSONDecodeError, openai.APIResponseValidationError)):
            return Failure(f"a body that is not valid JSON ({self._one_line(str(exc), 120)})")
        raise exc

    # -- error interpretation ----------------------------------------------------------------

    def _drop(self, refused: list[str], message: str, notes: list[str]) -> None:
        for name in refused:
            if name == "max_tokens" and "max_completion_tokens" in message:
                # Newer OpenAI models want the same limit under another name.
                self._renamed["max_tokens"] = "max_completion_tokens"
                note = "server refused 'max_tokens'; sent it as 'max_completion_tokens' and retried"
            else:
                self.dropped_params.add(name)
                note = f"server refused parameter '{name}'; dropped it and retried once"
            notes.append(note)
            logger.warning("%s: %s (server said: %s)", self.name, note, message)

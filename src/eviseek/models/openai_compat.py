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
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
import weakref
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from eviseek.errors import ConfigError, ModelConfigError
from eviseek.models.ratelimit import request_limit
from eviseek.models.retry import (
    Failure,
    RetryBudget,
    RetryPolicy,
    connection_refused,
    parse_retry_after,
    root_cause,
)
from eviseek.models.wire_images import DEFAULT_MAX_PIXELS, fit_pixels, image_data_url
from eviseek.types import (
    ChatMessage,
    Completion,
    GenerateConfig,
    ImagePart,
    TextPart,
    Usage,
    count_images,
)

__all__ = ["DEFAULT_MAX_PIXELS", "OpenAICompatModel", "fit_pixels", "image_data_url", "request_limit"]

logger = logging.getLogger("eviseek.models.openai")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "EMPTY"
"""Sent when no key is configured and the server is not OpenAI's: local servers ignore it, but
the client refuses to start without one."""

# Parameters a server may refuse, in the order they appear in requests. Only these are ever
# dropped: ``model`` and ``messages`` are the request itself.
_DROPPABLE = (
    "temperature",
    "top_p",
    "seed",
    "stop",
    "response_format",
    "max_tokens",
    "max_completion_tokens",
)
# Words that show a 400 is about a parameter being refused, not about its content.
_REFUSAL_CUES = re.compile(
    r"unsupported|not supported|isn't supported|does not support|doesn't support|unknown|unrecognized|"
    r"unrecognised|not allowed|not permitted|extra|invalid|cannot be used|can't be used|forbidden",
    re.IGNORECASE,
)


class OpenAICompatModel:
    """A model served behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    Args:
        model: the server's model name (``gpt-4o-mini``, ``Qwen/Qwen3-VL-8B-Instruct``...).
        base_url: the server's URL ending in ``/v1``; default ``$OPENAI_BASE_URL`` or OpenAI's.
        api_key: the key; default ``$OPENAI_API_KEY``. Without one, servers other than
            api.openai.com get the placeholder ``EMPTY`` (local servers need none).
        timeout_s: seconds per attempt (``GenerateConfig.timeout_s`` overrides it per call).
        max_retries: retries after a transient failure (429, 5xx, timeout, dropped connection,
            invalid body), so ``max_retries + 1`` attempts at most.
        max_connect_retries: retries when the connection is refused (a server that is down
            rarely comes back within a backoff, so this is kept short).
        backoff_base_s, backoff_max_s: the n-th retry waits ``min(max, base * 2**n)`` times a
            random factor in [0.5, 1] (jitter keeps parallel clients from retrying in step).
        retry_after_cap_s: the longest ``Retry-After`` honoured.
        max_concurrency: requests in flight at once to this base URL, per process; a 429 cuts
            it for the whole process (halved, then regrown one by one: see
            :mod:`eviseek.models.ratelimit`).
        max_throttled_s: how long one call may wait out 429s (rate limiting) before it fails;
            429s do not count against ``max_retries``.
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

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        max_connect_retries: int = 2,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 30.0,
        retry_after_cap_s: float = 60.0,
        max_concurrency: int = 16,
        max_throttled_s: float = 900.0,
        max_pixels: int | None = DEFAULT_MAX_PIXELS,
        image_format: str = "png",
        jpeg_quality: int = 90,
        default_config: GenerateConfig | None = None,
        reasoning_effort: str | None = None,
        thinking_budget: int | None = None,
        api: str = "chat",
    ) -> None:
        if not model:
            raise ConfigError("openai/<model> needs a model name after 'openai/', e.g. openai/gpt-4o-mini")
        url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if urlsplit(url).scheme not in ("http", "https"):
            raise ConfigError(
                f"base URL {url!r} must start with http:// or https:// (and usually end in /v1)"
            )
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not key:
            if urlsplit(url).hostname == "api.openai.com":
                raise ModelConfigError(
                    f"no API key for {url}: export OPENAI_API_KEY, or name the variable that holds "
                    "the key with --api-key-env"
                )
            key = PLACEHOLDER_KEY
        checks = {
            "timeout_s": timeout_s > 0,
            "max_retries": max_retries >= 0,
            "max_connect_retries": max_connect_retries >= 0,
            "backoff_base_s": backoff_base_s >= 0,
            "backoff_max_s": backoff_max_s >= 0,
            "retry_after_cap_s": retry_after_cap_s >= 0,
            "max_concurrency": max_concurrency >= 1,
            "max_throttled_s": max_throttled_s >= 0,
            "max_pixels": max_pixels is None or max_pixels >= 1,
            "jpeg_quality": 1 <= jpeg_quality <= 100,
            "thinking_budget": thinking_budget is None or thinking_budget >= 0,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ConfigError(
                f"openai/{model}: out-of-range setting(s) {', '.join(bad)}; timeouts and the pixel "
                "budget must be positive, retries and delays non-negative, jpeg_quality in 1..100"
            )
        if reasoning_effort is not None and reasoning_effort not in REASONING_EFFORTS:
            raise ConfigError(
                f"reasoning_effort {reasoning_effort!r} is not one of {', '.join(REASONING_EFFORTS)}"
            )
        if api not in ("chat", "responses"):
            raise ConfigError(f"api {api!r} is not supported; use 'chat' or 'responses'")
        fmt = image_format.lower().replace("jpg", "jpeg")
        if fmt not in ("png", "jpeg"):
            raise ConfigError(f"image_format {image_format!r} is not supported; use 'png' or 'jpeg'")

        self.name = f"openai/{model}"
        self.model = model
        self.base_url = url
        self._api_key = key
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.max_connect_retries = max_connect_retries
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.retry_after_cap_s = retry_after_cap_s
        self.max_concurrency = max_concurrency
        self.max_throttled_s = max_throttled_s
        self.max_pixels = max_pixels
        self.image_format = fmt
        self.jpeg_quality = jpeg_quality
        self.default_config = default_config or GenerateConfig()
        self.reasoning_effort = reasoning_effort
        self.thinking_budget = thinking_budget
        self.api = api
        # Parameters the server refused once: not sent again by this instance.
        self.dropped_params: set[str] = set()
        self._renamed: dict[str, str] = {}
        # An AsyncOpenAI client (and its connection pool) belongs to one event loop.
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    @classmethod
    def from_spec(cls, name: str, **kwargs: Any) -> OpenAICompatModel:
        """Registry factory for ``openai/<name>``."""
        return cls(name, **kwargs)

    def __repr__(self) -> str:  # the key stays out on purpose
        return f"OpenAICompatModel(name={self.name!r}, base_url={self.base_url!r})"

    # -- helpers -----------------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        """``text`` with the API key (and a bearer header carrying it) replaced by ``***``."""
        if self._api_key and self._api_key != PLACEHOLDER_KEY:
            text = text.replace(self._api_key, "***")
        return text

    def _one_line(self, text: str, limit: int = 300) -> str:
        text = " ".join(self._redact(str(text)).split())
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            from openai import AsyncOpenAI

            # max_retries=0: retries are ours (see _generate), so they are logged and testable.
            client = AsyncOpenAI(
                base_url=self.base_url, api_key=self._api_key, max_retries=0, timeout=self.timeout_s
            )
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close the HTTP client of the running event loop (others close with their loop)."""
        loop = asyncio.get_running_loop()
        client = self._clients.pop(loop, None)
        if client is not None:
            await client.close()

    def to_openai_messages(self, messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        """The chat-completions ``messages`` for ``messages``: images as data URLs, in order."""
        out: list[dict[str, Any]] = []
        for msg in messages:
            if isinstance(msg.content, str):
                out.append({"role": msg.role, "content": msg.content})
                continue
            parts: list[dict[str, Any]] = []
            for part in msg.content:
                if isinstance(part, TextPart):
                    parts.append({"type": "text", "text": part.text})
                elif isinstance(part, ImagePart):
                    url = image_data_url(
                        part.image,
                        max_pixels=self.max_pixels,
                        fmt=self.image_format,
                        quality=self.jpeg_quality,
                    )
                    image_url: dict[str, Any] = {"url": url}
                    if part.detail != "auto":  # some servers reject the field; auto is the default
                        image_url["detail"] = part.detail
                    parts.append({"type": "image_url", "image_url": image_url})
            out.append({"role": msg.role, "content": parts})
        return out

    def request_params(self, config: GenerateConfig, *, apply_drops: bool = True) -> dict[str, Any]:
        """The optional request parameters for ``config`` (never stage, schema or metadata).

        With ``apply_drops`` (the default) parameters the server refused earlier are left out
        and renamed ones carry their new name.
        """
        params: dict[str, Any] = {}
        if config.temperature is not None:
            params["temperature"] = config.temperature
        if config.top_p is not None:
            params["top_p"] = config.top_p
        if config.max_tokens is not None:
            params["max_tokens"] = config.max_tokens
        if config.seed is not None:
            params["seed"] = config.seed
        if config.stop:
            params["stop"] = list(config.stop)
        if config.json_mode:
            params["response_format"] = {"type": "json_object"}
        if self.reasoning_effort is not None:
            params["reasoning_effort"] = self.reasoning_effort
        if self.thinking_budget is not None:
            # Gemini's OpenAI-compatible endpoint reads its own options from a body field that is
            # itself named extra_body (the client's extra_body merges this dict into the body).
            params["extra_body"] = {
                "extra_body": {"google": {"thinking_config": {"thinking_budget": self.thinking_budget}}}
            }
        if self.api == "responses":
            params = responses_params(params)
        if not apply_drops:
            return params
        for old, new in self._renamed.items():
            if old in params:
                params[new] = params.pop(old)
        for name in self.dropped_params:
            params.pop(name, None)
        return params

    @property
    def retry_policy(self) -> RetryPolicy:
        """The retry settings of this model (see :mod:`eviseek.models.retry`)."""
        return RetryPolicy(
            max_retries=self.max_retries,
            max_connect_retries=self.max_connect_retries,
            backoff_base_s=self.backoff_base_s,
            backoff_max_s=self.backoff_max_s,
            retry_after_cap_s=self.retry_after_cap_s,
            max_throttled_s=self.max_throttled_s,
        )

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
        images = count_images(list(messages))
        if images:
            # Encoding megapixel images takes 0.1-1 s: keep the event loop free meanwhile.
            wire_messages = await asyncio.to_thread(self.to_openai_messages, messages)
        else:
            wire_messages = self.to_openai_messages(messages)
        timeout = cfg.timeout_s or self.timeout_s
        notes: list[str] = []
        already_dropped = sorted(self.dropped_params & set(self.request_params(cfg, apply_drops=False)))
        if already_dropped:
            notes.append(f"not sent (refused earlier by the server): {', '.join(already_dropped)}")
        response = await self._call_with_retries(client, wire_messages, cfg, timeout, notes)
        if self.api == "responses":
            return self._from_responses(response, images, start, notes)

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

    async def _call_with_retries(
        self,
        client: Any,
        wire_messages: list[dict[str, Any]],
        cfg: GenerateConfig,
        timeout: float,
        notes: list[str],
    ) -> Any:
        import openai

        limit = request_limit(self.base_url, self.max_concurrency)
        budget = RetryBudget(self.retry_policy, server=self.base_url, model=self.model)
        dropped_this_call: set[str] = set()
        while True:
            params = self.request_params(cfg)
            failure: Failure
            try:
                async with limit.slot(self._throttle_pause):
                    logger.debug(
                        "POST %s/chat/completions model=%s messages=%d params=%s",
                        self.base_url,
                        self.model,
                        len(wire_messages),
                        sorted(params),
                    )
                    if self.api == "responses":
                        response = await client.responses.create(
                            model=self.model, input=responses_input(wire_messages), timeout=timeout, **params
                        )
                    else:
                        response = await client.chat.completions.create(
                            model=self.model, messages=wire_messages, timeout=timeout, **params
                        )
                if self.api == "responses" and getattr(response, "output", None) is not None:
                    if budget.failures:
                        n = len(budget.failures)
                        notes.append(f"succeeded after {n} retr{'y' if n == 1 else 'ies'}")
                    return response
                if self.api == "responses":
                    failure = Failure("a reply that is not a Responses API response (no output)")
                elif isinstance(response, str) or not getattr(response, "choices", None):
                    failure = Failure("a reply that is not a chat completion (no choices)")
                else:
                    if budget.failures:
                        n = len(budget.failures)
                        notes.append(f"succeeded after {n} retr{'y' if n == 1 else 'ies'}")
                    return response
            except openai.APIStatusError as exc:
                status = exc.status_code
                message = self._server_message(exc)
                if status == 400:
                    refused = self._refused_params(exc, params, dropped_this_call)
                    if refused:
                        self._drop(refused, message, notes)
                        dropped_this_call.update(refused)
                        continue
                if status in (408, 409, 429) or status >= 500:
                    failure = Failure(
                        f"HTTP {status}: {message}",
                        parse_retry_after(exc.response.headers),
                        throttled=status == 429,
                    )
                else:
                    raise ModelConfigError(self._config_message(status, message)) from None
            except openai.APITimeoutError:
                failure = Failure(f"no answer within {timeout:g}s (timeout)")
            except openai.APIConnectionError as exc:
                if connection_refused(exc):
                    failure = Failure("connection refused", refused=True)
                else:
                    failure = Failure(f"connection dropped ({self._one_line(root_cause(exc))})")
            except (json.JSONDecodeError, openai.APIResponseValidationError) as exc:
                failure = Failure(f"a body that is not valid JSON ({self._one_line(str(exc), 120)})")

            budget.record(failure)
            if failure.throttled:
                # Rate limited: the shared limit has paused this server and cut the requests in
                # flight; waiting here does not use up retries, only the throttle budget.
                budget.check_throttle()
                waited = time.monotonic()
                await limit.wait_pause()
                budget.add_throttled(time.monotonic() - waited + 1e-3)
                continue
            delay = budget.next_delay(failure)  # raises once this failure's retries are spent
            logger.warning(
                "%s: %s; retrying in %.2fs (retry %d)",
                self.name,
                self._one_line(failure.reason, 200),
                delay,
                budget.attempts_retried,
            )
            await asyncio.sleep(delay)

    def _from_responses(self, response: Any, images: int, start: float, notes: list[str]) -> Completion:
        text = self._redact(getattr(response, "output_text", "") or "")
        if not text:
            notes.append("the reply had no text content")
        details = getattr(response, "incomplete_details", None)
        cut = getattr(response, "status", None) == "incomplete" and (
            getattr(details, "reason", None) == "max_output_tokens"
        )
        usage = Usage(images_sent=images)
        reported = getattr(response, "usage", None)
        if reported is not None:
            out_details = getattr(reported, "output_tokens_details", None)
            reasoning = getattr(out_details, "reasoning_tokens", None) if out_details is not None else None
            usage.input_tokens = reported.input_tokens
            # The Responses API counts reasoning inside output_tokens: take it out (see usage_of).
            usage.output_tokens = max(0, reported.output_tokens - (reasoning or 0))
            usage.reasoning_tokens = reasoning
        return Completion(
            text=text,
            usage=usage,
            latency_s=time.perf_counter() - start,
            model=self.name,
            finish_reason="length" if cut else "stop",
            notes=notes,
        )

    # -- error interpretation ----------------------------------------------------------------

    def _throttle_pause(self, exc: BaseException) -> float | None:
        """For a 429: how long to pause every request to this server (``Retry-After`` if the
        server sent one, else a jittered base backoff); ``None`` for any other failure."""
        import openai

        if isinstance(exc, openai.APIStatusError) and exc.status_code == 429:
            return self.retry_policy.backoff(0, parse_retry_after(exc.response.headers))
        return None

    def _server_message(self, exc: Any) -> str:
        body = getattr(exc, "body", None)
        message = None
        if isinstance(body, dict):
            err = body.get("error", body)
            if isinstance(err, dict):
                message = err.get("message") or err.get("detail")
            elif isinstance(err, str):
                message = err
        if not message:
            message = getattr(exc, "message", None) or str(exc)
        return self._one_line(str(message))

    def _config_message(self, status: int, message: str) -> str:
        where = f"the server at {self.base_url}"
        if status == 401:
            hint = (
                "the API key was rejected: check the key in the variable named by --api-key-env "
                "(or OPENAI_API_KEY)"
            )
        elif status == 403:
            hint = f"access denied: check that the API key may use model {self.model!r}"
        elif status == 404:
            hint = (
                f"not found: check the model name {self.model!r} (--model openai/<name>) and that "
                "the base URL is right and ends in /v1"
            )
        elif status == 400:
            hint = "the request was rejected: check the sampling settings, message format and image sizes"
        else:
            hint = "the request was refused"
        return f"{where} answered HTTP {status}, {hint} (server said: {message})"

    def _refused_params(self, exc: Any, params: dict[str, Any], already: set[str]) -> list[str]:
        """Which of the parameters we sent a 400 says the server refuses (none if unclear)."""
        sent = [p for p in _DROPPABLE if p in params and p not in already]
        if not sent:
            return []
        body = getattr(exc, "body", None)
        err = body.get("error", body) if isinstance(body, dict) else None
        named = err.get("param") if isinstance(err, dict) else None
        # Only the human-readable message: the body's error *type* (invalid_request_error)
        # would match every cue.
        text = self._server_message(exc)
        if not _REFUSAL_CUES.search(text):
            return []
        if isinstance(named, str):
            for p in sent:
                if named == p or named.endswith("." + p):
                    return [p]
        return [p for p in sent if re.search(rf"(?<![\w.]){re.escape(p)}(?!\w)", text)]

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


def usage_of(reported: Any, images: int) -> Usage:
    """Token counts of a chat-completions ``usage`` object, reasoning apart from visible output.

    Reasoning comes from ``completion_tokens_details.reasoning_tokens`` (OpenAI, Gemini's
    OpenAI-compatible endpoint, vLLM). OpenAI counts it inside ``completion_tokens``; Gemini's
    endpoint counts it on top (its ``total_tokens`` is prompt + completion + reasoning). We tell
    the two apart by ``total_tokens`` (absent: OpenAI's documented convention) and take reasoning
    out of the output, so input + output + reasoning is the paper's total either way.
    """
    usage = Usage(images_sent=images)
    if reported is None:
        return usage
    prompt = getattr(reported, "prompt_tokens", None)
    completion = getattr(reported, "completion_tokens", None)
    details = getattr(reported, "completion_tokens_details", None)
    reasoning = getattr(details, "reasoning_tokens", None) if details is not None else None
    usage.input_tokens, usage.output_tokens = prompt, completion
    if isinstance(reasoning, int) and reasoning > 0:
        usage.reasoning_tokens = reasoning
        total = getattr(reported, "total_tokens", None)
        separate = (
            isinstance(total, int)
            and isinstance(prompt, int)
            and isinstance(completion, int)
            and total == prompt + completion + reasoning
        )
        if isinstance(completion, int) and not separate:
            usage.output_tokens = max(0, completion - reasoning)
    elif isinstance(reasoning, int):
        usage.reasoning_tokens = reasoning
    return usage


REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
"""The reasoning efforts OpenAI's API names (servers may accept fewer)."""


def responses_params(params: dict[str, Any]) -> dict[str, Any]:
    """Chat-completions parameters in the Responses API's names (``max_output_tokens``,
    ``reasoning.effort``, ``text.format``); ``seed`` and ``stop`` have no counterpart there."""
    out = dict(params)
    if "max_tokens" in out:
        out["max_output_tokens"] = out.pop("max_tokens")
    if "reasoning_effort" in out:
        out["reasoning"] = {"effort": out.pop("reasoning_effort")}
    if "response_format" in out:
        out["text"] = {"format": out.pop("response_format")}
    out.pop("seed", None)
    out.pop("stop", None)
    return out


def responses_input(wire_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat-completions messages as Responses API input turns (``input_text``/``input_image``)."""
    turns: list[dict[str, Any]] = []
    for msg in wire_messages:
        content = msg["content"]
        if isinstance(content, str):
            turns.append({"role": msg["role"], "content": content})
            continue
        parts: list[dict[str, Any]] = []
        for part in content:
            if part["type"] == "text":
                parts.append({"type": "input_text", "text": part["text"]})
            else:
                image = {"type": "input_image", "image_url": part["image_url"]["url"]}
                image["detail"] = part["image_url"].get("detail", "auto")
                parts.append(image)
        turns.append({"role": msg["role"], "content": parts})
    return turns

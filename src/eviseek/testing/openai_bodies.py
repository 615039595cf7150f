"""What :class:`~eviseek.testing.OpenAITestServer` answers: scripted replies and the OpenAI
bodies they become (chat completions, Responses API responses, error objects)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ServerReply(BaseModel):
    """One scripted answer of :class:`OpenAITestServer`.

    Give at most one of ``text`` (a normal chat completion), ``json`` (any JSON body) or ``body``
    (raw text sent as is, e.g. invalid JSON). With none of them the reply is an empty
    completion.
    """

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    """The assistant's reply, wrapped in a ``chat.completion`` body."""
    json_body: dict[str, Any] | None = Field(default=None, alias="json")
    """A whole JSON body to send instead (for errors or odd shapes)."""
    body: str | None = None
    """Raw body text sent verbatim (need not be JSON)."""
    status: int = 200
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra response headers, e.g. ``{"Retry-After": "2"}``."""
    content_type: str = "application/json"
    delay_s: float = 0.0
    """Seconds to wait before answering (to exceed a client timeout)."""
    drop: bool = False
    """Close the connection without sending any response."""
    prompt_tokens: int | None = None
    """Reported input tokens; by default the words of the request's text."""
    completion_tokens: int | None = None
    """Reported output tokens; by default the words of ``text``."""
    reasoning_tokens: int | None = None
    """When set, reported as ``completion_tokens_details.reasoning_tokens``."""
    usage: bool = True
    """``False`` leaves ``usage`` out of the body (a server that does not report it)."""
    finish_reason: str = "stop"

    @model_validator(mode="after")
    def _one_body(self) -> ServerReply:
        given = [n for n in ("text", "json_body", "body") if getattr(self, n) is not None]
        if len(given) > 1:
            raise ValueError(f"give at most one of text, json and body (got {', '.join(given)})")
        return self

    @classmethod
    def error(
        cls,
        status: int,
        message: str = "",
        *,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> ServerReply:
        """An error reply with an OpenAI-style ``{"error": {...}}`` body."""
        return cls(
            status=status,
            json=error_body(message or f"scripted error {status}", status=status, param=param, code=code),
            headers=headers or {},
        )


Reply = str | dict[str, Any] | ServerReply
Handler = Callable[[dict[str, Any]], Reply]


def error_body(message: str, *, status: int = 400, param: str | None = None, code: str | None = None) -> dict:
    """An OpenAI-style error body."""
    kind = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error"}
    kind.update({404: "not_found_error", 429: "rate_limit_error"})
    return {
        "error": {
            "message": message,
            "type": kind.get(status, "server_error"),
            "param": param,
            "code": code,
        }
    }


def chat_completion(
    text: str,
    *,
    model: str = "test-model",
    prompt_tokens: int | None = 0,
    completion_tokens: int | None = None,
    reasoning_tokens: int | None = None,
    usage: bool = True,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    """A ``chat.completion`` body carrying ``text``, with usage unless ``usage`` is false."""
    body: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
    }
    if usage:
        out = len(text.split()) if completion_tokens is None else completion_tokens
        inp = prompt_tokens or 0
        u: dict[str, Any] = {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out}
        if reasoning_tokens is not None:
            u["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
        body["usage"] = u
    return body


def responses_body(
    text: str,
    *,
    model: str = "test-model",
    input_tokens: int = 0,
    output_tokens: int | None = None,
    reasoning_tokens: int | None = None,
    usage: bool = True,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    """A Responses API ``response`` body carrying ``text`` (``finish_reason="length"`` makes it
    ``incomplete`` for ``max_output_tokens``). Reasoning counts inside ``output_tokens``."""
    incomplete = finish_reason == "length"
    body: dict[str, Any] = {
        "id": f"resp_{uuid.uuid4().hex[:16]}",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "output": [
            {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex[:16]}",
                "status": "incomplete" if incomplete else "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    if usage:
        out = len(text.split()) + (reasoning_tokens or 0) if output_tokens is None else output_tokens
        body["usage"] = {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens or 0},
            "total_tokens": input_tokens + out,
        }
    return body

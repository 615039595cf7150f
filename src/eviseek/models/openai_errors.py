"""How ``openai/<model>`` reads a server's refusal: its message, the parameter it refused, and
the one-line error a user gets for a request that no retry can fix (400/401/403/404)."""

from __future__ import annotations

import re
from typing import Any

# Parameters a server may refuse, in the order they appear in requests. Only these are ever
# dropped: ``model`` and ``messages`` are the request itself.
DROPPABLE = (
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


def server_message(exc: Any) -> str:
    """The human-readable message of an API error (the body's ``error.message`` when there is
    one), not yet redacted or shortened."""
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
    return str(message)


def config_message(status: int, message: str, *, base_url: str, model: str) -> str:
    """The one-line error for a request the server refuses: what it said and what to check."""
    where = f"the server at {base_url}"
    if status == 401:
        hint = (
            "the API key was rejected: check the key in the variable named by --api-key-env "
            "(or OPENAI_API_KEY)"
        )
    elif status == 403:
        hint = f"access denied: check that the API key may use model {model!r}"
    elif status == 404:
        hint = (
            f"not found: check the model name {model!r} (--model openai/<name>) and that "
            "the base URL is right and ends in /v1"
        )
    elif status == 400:
        hint = "the request was rejected: check the sampling settings, message format and image sizes"
    else:
        hint = "the request was refused"
    return f"{where} answered HTTP {status}, {hint} (server said: {message})"


def refused_params(exc: Any, message: str, params: dict[str, Any], already: set[str]) -> list[str]:
    """Which of the parameters we sent a 400 says the server refuses (none if unclear).

    ``message`` is the error's readable message (:func:`server_message`); only it is searched
    for refusal words, as the body's error *type* (``invalid_request_error``) would match every
    cue.
    """
    sent = [p for p in DROPPABLE if p in params and p not in already]
    if not sent:
        return []
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    named = err.get("param") if isinstance(err, dict) else None
    if not _REFUSAL_CUES.search(message):
        return []
    if isinstance(named, str):
        for p in sent:
            if named == p or named.endswith("." + p):
                return [p]
    return [p for p in sent if re.search(rf"(?<![\w.]){re.escape(p)}(?!\w)", message)]

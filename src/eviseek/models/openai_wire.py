"""What ``openai/<model>`` sends and reads: messages, parameters and usage in the OpenAI formats.

Pure conversions, no I/O: eviseek's :class:`~eviseek.types.ChatMessage` list becomes the
chat-completions ``messages`` (images as data URLs, :mod:`eviseek.models.wire_images`), a
:class:`~eviseek.types.GenerateConfig` becomes the optional request parameters, and both are
renamed for OpenAI's Responses API when a model is served there. Going back, a server's ``usage``
becomes :class:`~eviseek.types.Usage` (reasoning apart from visible output) and a Responses API
reply becomes a :class:`~eviseek.types.Completion`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from eviseek.models.wire_images import image_data_url
from eviseek.types import ChatMessage, Completion, GenerateConfig, ImagePart, TextPart, Usage

REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
"""The reasoning efforts OpenAI's API names (servers may accept fewer)."""


def chat_messages(
    messages: Sequence[ChatMessage], *, max_pixels: int | None, fmt: str, quality: int
) -> list[dict[str, Any]]:
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
                url = image_data_url(part.image, max_pixels=max_pixels, fmt=fmt, quality=quality)
                image_url: dict[str, Any] = {"url": url}
                if part.detail != "auto":  # some servers reject the field; auto is the default
                    image_url["detail"] = part.detail
                parts.append({"type": "image_url", "image_url": image_url})
        out.append({"role": msg.role, "content": parts})
    return out


def sampling_params(
    config: GenerateConfig,
    *,
    reasoning_effort: str | None = None,
    thinking_budget: int | None = None,
    responses: bool = False,
) -> dict[str, Any]:
    """The optional request parameters for ``config`` (never stage, schema or metadata), in the
    Responses API's names when ``responses``."""
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
    if reasoning_effort is not None:
        params["reasoning_effort"] = reasoning_effort
    if thinking_budget is not None:
        # Gemini's OpenAI-compatible endpoint reads its own options from a body field that is
        # itself named extra_body (the client's extra_body merges this dict into the body).
        params["extra_body"] = {
            "extra_body": {"google": {"thinking_config": {"thinking_budget": thinking_budget}}}
        }
    return responses_params(params) if responses else params


def responses_completion(
    response: Any,
    *,
    images: int,
    latency_s: float,
    model: str,
    notes: list[str],
    redact: Callable[[str], str],
) -> Completion:
    """A Responses API reply as a :class:`Completion` (its text passed through ``redact``)."""
    text = redact(getattr(response, "output_text", "") or "")
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
        latency_s=latency_s,
        model=model,
        finish_reason="length" if cut else "stop",
        notes=notes,
    )


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

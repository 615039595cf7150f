"""Read a multi-turn rollout back from its decoded text, as trainers hand it to reward code.

TRL and verl both end up with one token sequence per rollout: the first assistant turn, then
for each tool call a tool-reply turn (the crop's image tokens inside ``<tool_response>``) and
the next assistant turn. :func:`rollout_messages` splits that text into chat messages that
:func:`eviseek.autotool.parser.parse_completion` reads, keeping what matters to the rewards:
the exact text of each assistant turn (mode token included) and whether each tool reply
carried an image.

Two renderings are understood:

* with special tokens (``<|im_start|>user\\n...<|im_end|>``), as TRL's completion ids decode;
* without them (``\\nuser\\n<tool_response>...</tool_response>\\nassistant\\n``), as verl's
  reward managers decode (``skip_special_tokens=True``). Image tokens are special, so there the
  image is invisible and only an error reply (``Zoom failed: ...``) marks a failed call.
"""

from __future__ import annotations

import re
from typing import Any

IM_START, IM_END = "<|im_start|>", "<|im_end|>"
_VISION = ("<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>")
# A tool reply with the chat markers stripped: "user" on its own line, the wrapped reply, then
# the next assistant header (absent when the rollout ended after the reply).
_PLAIN_REPLY = re.compile(r"\n?user\n(<tool_response>.*?</tool_response>)\s*(?:assistant\n|$)", re.DOTALL)


def rollout_messages(text: str) -> list[dict[str, Any]]:
    """Split a decoded multi-turn completion (Qwen chat markup) into chat messages.

    The first turn is the assistant's; each later block becomes a message. A tool-reply block
    that carried image tokens gets an image part, so the parser can tell a zoom that returned a
    crop from one that returned an error.
    """
    if IM_START not in text and "<tool_response>" in text:
        return _plain_messages(text)
    messages: list[dict[str, Any]] = []
    for k, block in enumerate(text.split(IM_START)):
        if k == 0:
            role, body = "assistant", block
        else:
            role, _, body = block.partition("\n")
            role = role.strip() or "user"
        body = body.split(IM_END)[0]
        if k > 0 and not body.strip():
            continue
        has_image = "<|image_pad|>" in body
        for marker in _VISION:
            body = body.replace(marker, "")
        body = body.replace("<|endoftext|>", "")
        if role == "assistant":
            messages.append({"role": "assistant", "content": body})
        else:
            content: list[dict[str, Any]] = [{"type": "image"}] if has_image else []
            content.append({"type": "text", "text": body})
            messages.append({"role": role, "content": content})
    return messages


def _plain_messages(text: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    pos = 0
    for m in _PLAIN_REPLY.finditer(text):
        messages.append({"role": "assistant", "content": text[pos : m.start()]})
        messages.append({"role": "user", "content": [{"type": "text", "text": m.group(1)}]})
        pos = m.end()
    tail = text[pos:]
    if tail.strip() or not messages:
        messages.append({"role": "assistant", "content": tail})
    return messages


def crop_turns(messages: list[dict[str, Any]]) -> int:
    """Tool-reply turns of a rebuilt rollout that carry an image."""
    return sum(
        1
        for m in messages
        if m["role"] != "assistant"
        and isinstance(m["content"], list)
        and any(p.get("type") == "image" for p in m["content"])
    )

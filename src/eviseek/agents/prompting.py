"""Render a stage's Jinja2 template into chat messages with images in place.

Each stage has one template under ``eviseek/agents/prompts/<stage>.j2``. A template writes the
system text, then a line ``=== user ===``, then the user turn. Inside the user turn it places an
image with ``{{ image(img) }}``; the renderer replaces each such marker by the image itself, so the
template alone decides where images sit between pieces of text.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from eviseek.types import ChatMessage, Image, ImagePart, TextPart

USER_SPLIT = "=== user ==="
_MARK = re.compile("\x00IMG(\\d+)\x00")


@cache
def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("eviseek.agents", "prompts"),
        autoescape=False,  # plain text prompts, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,  # a missing variable is a bug in the agent, not a blank
        keep_trailing_newline=False,
    )


@cache
def template(stage: str) -> Any:
    """The compiled template of ``stage`` (loaded once per process)."""
    return _environment().get_template(f"{stage}.j2")


def render(stage: str, **context: Any) -> list[ChatMessage]:
    """Render ``stage``'s template into a system message and a user message with images."""
    images: list[Image] = []

    def image(img: Image) -> str:
        images.append(img)
        return f"\x00IMG{len(images) - 1}\x00"

    text = template(stage).render(image=image, **context)
    system, sep, user = text.partition(USER_SPLIT)
    if not sep:
        system, user = "", text
    parts: list[TextPart | ImagePart] = []
    pos = 0
    for m in _MARK.finditer(user):
        chunk = user[pos : m.start()]
        if chunk.strip():
            # Keep one newline before the image so the text reads the same when joined.
            parts.append(TextPart(text=chunk.strip("\n") + "\n"))
        parts.append(ImagePart(image=images[int(m.group(1))]))
        pos = m.end()
    tail = user[pos:]
    if tail.strip():
        parts.append(TextPart(text=tail.strip("\n")))
    messages: list[ChatMessage] = []
    if system.strip():
        messages.append(ChatMessage(role="system", content=system.strip()))
    messages.append(ChatMessage(role="user", content=parts))
    return messages

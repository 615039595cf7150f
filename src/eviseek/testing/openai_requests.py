"""Reading what a client sent to :class:`~eviseek.testing.OpenAITestServer`: the texts and the
images of a chat-completions or Responses API request, each image checked to be a base64 data URL
of the format it claims."""

from __future__ import annotations

import base64
import io
from typing import Any


def request_turns(request_json: dict[str, Any]) -> list[Any]:
    # Chat completions send ``messages``; the Responses API sends ``input`` (a string or turns).
    if "input" in request_json and "messages" not in request_json:
        given = request_json["input"]
        return [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
    return list(request_json.get("messages", []))


def request_texts(request_json: dict[str, Any]) -> list[str]:
    """Every text piece of a chat-completions or Responses request, in message order."""
    out: list[str] = []
    for msg in request_turns(request_json):
        content = msg.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.extend(p.get("text", "") for p in content if p.get("type") in ("text", "input_text"))
    return out


def request_words(request_json: dict[str, Any]) -> int:
    return sum(len(t.split()) for t in request_texts(request_json))


def decode_data_url(url: str) -> tuple[str, bytes]:
    """Split a ``data:<mime>;base64,<payload>`` URL into its MIME type and decoded bytes.

    Raises ``ValueError`` when the URL is not a base64 data URL or the payload is not valid
    base64, so a test that calls it checks the encoding too.
    """
    if not url.startswith("data:") or ";base64," not in url:
        raise ValueError(f"not a base64 data URL: {url[:40]!r}")
    header, payload = url[5:].split(";base64,", 1)
    try:
        data = base64.b64decode(payload, validate=True)
    except ValueError as exc:
        raise ValueError(f"data URL payload is not valid base64: {exc}") from exc
    return header, data


def request_images(request_json: dict[str, Any]) -> list[Any]:
    """Decode every ``image_url`` part of a request into a PIL image, in order.

    Each image must be a base64 data URL whose MIME type matches the decoded format (PNG or
    JPEG); anything else raises ``ValueError``. The PIL images have their pixels loaded.
    """
    from PIL import Image as PILImage

    images = []
    for msg in request_turns(request_json):
        content = msg.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
            elif part.get("type") == "input_image":  # the Responses API's image part
                url = part["image_url"]
            else:
                continue
            mime, data = decode_data_url(url)
            pil = PILImage.open(io.BytesIO(data))
            pil.load()
            expected = {"image/png": "PNG", "image/jpeg": "JPEG"}.get(mime)
            if expected is None or pil.format != expected:
                raise ValueError(f"data URL says {mime} but the bytes are {pil.format}")
            images.append(pil)
    return images

"""A second remote provider in one file: ``plainchat/<model>`` posts chat completions with the
standard library alone; retries, backoff and the rate limit a 429 cuts come from ``RemoteModel``.

    eviseek eval --plugin examples/plugins/plain_chat.py --model plainchat/my-vlm \
        --base-url http://127.0.0.1:8000/v1 --agents passive --dataset tabletop:dev --limit 2 --out runs/plain
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from eviseek.models import register_provider
from eviseek.models.openai_wire import chat_messages
from eviseek.models.remote import RemoteModel, RemoteSettings, StatusError
from eviseek.models.retry import Failure, parse_retry_after
from eviseek.types import ChatMessage, Completion, GenerateConfig, Usage, count_images


class PlainChatSettings(RemoteSettings):
    """URL, key, timeout, retry policy and concurrency (inherited), and one setting of its own."""

    max_pixels: int = Field(1_000_000, ge=1)


class PlainChatModel(RemoteModel[bytes]):
    """A request is its JSON body: ``send`` posts it once, the base class's ``call`` retries it."""

    provider = "plainchat"
    settings: PlainChatSettings  # the registry builds it with factory(name, settings)

    async def generate(
        self, messages: Sequence[ChatMessage], config: GenerateConfig | None = None
    ) -> Completion:
        cfg, notes, start = config or GenerateConfig(), [], time.perf_counter()
        body = {"model": self.model, "max_tokens": cfg.max_tokens, "temperature": cfg.temperature}
        body = {k: v for k, v in body.items() if v is not None}
        body["messages"] = chat_messages(messages, max_pixels=self.settings.max_pixels, fmt="png", quality=90)
        timeout = cfg.timeout_s or self.timeout_s
        reply = await self.call(json.dumps(body).encode(), timeout=timeout, notes=notes)
        used = reply.get("usage") or {}
        usage = Usage(input_tokens=used.get("prompt_tokens"), output_tokens=used.get("completion_tokens"))
        usage.images_sent = count_images(list(messages))
        text = self.redact(reply["choices"][0]["message"].get("content") or "")
        latency = time.perf_counter() - start
        return Completion(text=text, usage=usage, latency_s=latency, model=self.name, notes=notes)

    async def send(self, request: bytes, timeout: float) -> Any:
        return await asyncio.to_thread(self._post, request, timeout)  # urllib blocks: not on the loop

    def _post(self, body: bytes, timeout: float) -> Any:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self._api_key or 'EMPTY'}"}
        post = urllib.request.Request(f"{self.base_url}/chat/completions", data=body, headers=headers)
        try:
            with urllib.request.urlopen(post, timeout=timeout) as reply:
                return json.loads(reply.read())
        except urllib.error.HTTPError as exc:  # a status: the base retries 408, 409, 429 and 5xx
            text = exc.read().decode(errors="replace")[:300]
            raise StatusError(exc.code, text, parse_retry_after(exc.headers)) from None
        except urllib.error.URLError as exc:  # refused, reset, timed out: the base reads OSErrors
            reason = exc.reason
            raise reason if isinstance(reason, OSError) else ConnectionError(str(reason)) from None

    def check_reply(self, reply: Any) -> Failure | None:
        ok = isinstance(reply, dict) and reply.get("choices")
        return None if ok else Failure("a reply with no choices")  # retried like a 5xx


# RemoteSettings make it remote: --base-url, --api-key-env and the timeout reach it; eval checks it.
register_provider("plainchat", lambda: PlainChatModel, "chat, stdlib only", settings=PlainChatSettings)

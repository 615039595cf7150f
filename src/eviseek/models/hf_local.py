"""``hf/<path-or-id>``: a local transformers vision-language model (extra ``hf``).

The model loads on the first call, not when the object is built, so building an agent or a CLI
command stays fast. Generation is synchronous in transformers; it runs in a worker thread so the
caller's event loop keeps serving other episodes, and one lock serialises calls to the model (a
single local model gains nothing from interleaved forward passes, and sampling seeds the global
torch generator).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eviseek._lazy import require
from eviseek.errors import ConfigError, ModelError
from eviseek.models.settings import HFSettings
from eviseek.types import ChatMessage, Completion, GenerateConfig, ImagePart, Usage, count_images

# Model types whose stock processor demands a torchvision video processor; on a machine without
# torchvision they are loaded with an image-only processor instead.
_NO_VIDEO_FALLBACK = {"qwen3_vl"}


class HFLocalModel:
    """A local vision-language model run with transformers.

    ``path_or_id`` is a directory written by ``save_pretrained`` or a hub id already in the local
    cache (nothing is downloaded when ``HF_HUB_OFFLINE=1``). ``settings`` is one
    :class:`~eviseek.models.settings.HFSettings`: ``device`` is ``"cpu"``, ``"cuda"``,
    ``"cuda:1"`` ... or ``"auto"`` (accelerate places the weights); ``dtype`` is ``"auto"`` (the
    checkpoint's), ``"float32"``, ``"bfloat16"`` or ``"float16"``; ``max_pixels`` caps the area
    an image is resized to before it becomes tokens (the processor's own default otherwise).
    """

    def __init__(
        self, path_or_id: str, settings: HFSettings | None = None, *, name: str | None = None
    ) -> None:
        if not path_or_id:
            raise ConfigError(
                "hf/ needs a model directory or hub id, e.g. hf/./my-model or hf/Qwen/Qwen3-VL-8B-Instruct"
            )
        settings = settings or HFSettings()
        self.settings = settings
        self.name = name or f"hf/{path_or_id}"
        self.path_or_id = path_or_id
        self.device = settings.device
        self.dtype = settings.dtype
        self.max_pixels = settings.max_pixels
        self.max_new_tokens = settings.max_new_tokens
        self.trust_remote_code = settings.trust_remote_code
        self._model: Any = None
        self._processor: Any = None
        self._load_lock = threading.Lock()
        self._generate_lock = threading.Lock()
        self.load_notes: list[str] = []

    @classmethod
    def from_spec(cls, name: str, settings: HFSettings | None = None, **kwargs: Any) -> HFLocalModel:
        """Registry factory: ``hf/<path-or-id>`` with ``settings``, or keyword arguments parsed
        into :class:`~eviseek.models.settings.HFSettings`."""
        if kwargs or settings is None:
            given = settings.model_dump(exclude_unset=True) if settings is not None else {}
            settings = HFSettings.parse(f"hf/{name}", **{**given, **kwargs})
        return cls(name, settings)

    # -- loading ---------------------------------------------------------------------------------

    def load(self) -> tuple[Any, Any]:
        """Load (once) and return ``(model, processor)``. Safe to call from several threads."""
        with self._load_lock:
            if self._model is None:
                self._model, self._processor = self._load()
        return self._model, self._processor

    def _load(self) -> tuple[Any, Any]:
        require("torch", "hf", "local transformers models")
        transformers = require("transformers", "hf", "local transformers models")
        source = self.path_or_id
        local = Path(source).expanduser()
        if local.exists():
            if not (local / "config.json").is_file():
                raise ConfigError(
                    f"{local} has no config.json: point hf/ at a directory written by save_pretrained"
                )
            source = str(local)
        try:
            config = transformers.AutoConfig.from_pretrained(source, trust_remote_code=self.trust_remote_code)
        except OSError as exc:
            raise ConfigError(
                f"cannot load a model config from {source!r}: it is neither a local model directory nor "
                f"a hub id in the local cache ({exc}). Download it first (huggingface-cli download ...) "
                "or pass a directory"
            ) from exc
        processor, notes = load_vlm_processor(
            source, trust_remote_code=self.trust_remote_code, max_pixels=self.max_pixels
        )
        self.load_notes.extend(notes)
        kwargs: dict[str, Any] = {"trust_remote_code": self.trust_remote_code}
        kwargs["dtype"] = self.dtype
        if self.device == "auto":
            kwargs["device_map"] = "auto"
        model_cls = transformers.AutoModelForImageTextToText
        try:
            model = model_cls.from_pretrained(source, **kwargs)
        except ValueError as exc:
            raise ConfigError(
                f"{source!r} ({config.model_type}) is not an image-text-to-text model that transformers "
                f"can load: {exc}"
            ) from exc
        if self.device != "auto":
            model.to(self.device)
        model.eval()
        return model, processor

    # -- generation ------------------------------------------------------------------------------

    async def generate(
        self, messages: Sequence[ChatMessage], config: GenerateConfig | None = None
    ) -> Completion:
        """Generate one reply in a worker thread; see the class docstring."""
        cfg = config or GenerateConfig()
        if not messages:
            raise ConfigError("generate needs at least one message")
        return await asyncio.to_thread(self._generate_sync, list(messages), cfg)

    def _generate_sync(self, messages: list[ChatMessage], cfg: GenerateConfig) -> Completion:
        start = time.perf_counter()
        model, processor = self.load()
        torch = require("torch", "hf", "local transformers models")
        notes: list[str] = list(self.load_notes)
        hf_messages = to_hf_messages(messages)
        try:
            inputs = processor.apply_chat_template(
                hf_messages,
                add_generation_prompt=True,
                tokenize=True,
                return_dict=True,
                return_tensors="pt",
            )
        except (ValueError, TypeError, KeyError) as exc:
            raise ModelError(f"{self.name}: cannot build the prompt with the chat template: {exc}") from exc
        inputs = inputs.to(model.device)
        tokenizer = getattr(processor, "tokenizer", processor)
        gen_kwargs: dict[str, Any] = {"max_new_tokens": cfg.max_tokens or self.max_new_tokens}
        sample = cfg.temperature is not None and cfg.temperature > 0
        gen_kwargs["do_sample"] = sample
        if sample:
            gen_kwargs["temperature"] = cfg.temperature
            if cfg.top_p is not None:
                gen_kwargs["top_p"] = cfg.top_p
        else:
            # Greedy decoding: clear the sampling settings a checkpoint's generation config may carry.
            gen_kwargs.update(temperature=None, top_p=None, top_k=None)
        if cfg.stop:
            gen_kwargs["stop_strings"] = list(cfg.stop)
            gen_kwargs["tokenizer"] = tokenizer
        if cfg.json_mode:
            notes.append("json_mode is not enforced by the hf provider; the prompt must ask for JSON")
        if cfg.timeout_s is not None:
            notes.append("timeout_s is ignored by the hf provider (local generation cannot be interrupted)")
        prompt_len = int(inputs["input_ids"].shape[1])
        with self._generate_lock, torch.inference_mode():
            if cfg.seed is not None:
                torch.manual_seed(cfg.seed)
            output = model.generate(**inputs, **gen_kwargs)
        new_ids = output[0, prompt_len:].tolist()
        eos_ids = _eos_ids(model, tokenizer)
        finish = "length"
        cut = len(new_ids)
        for i, tok in enumerate(new_ids):
            if tok in eos_ids:
                cut, finish = i + 1, "stop"
                break
        new_ids = new_ids[:cut]
        text = tokenizer.decode(new_ids, skip_special_tokens=True)
        if cfg.stop and finish == "length":
            for stop in cfg.stop:
                if stop in text:
                    text, finish = text[: text.index(stop)], "stop"
                    break
        reasoning = _reasoning_tokens(tokenizer, text)
        usage = Usage(
            input_tokens=prompt_len,
            # Usage counts reasoning apart from the visible output (its total adds them up).
            output_tokens=max(0, len(new_ids) - (reasoning or 0)),
            reasoning_tokens=reasoning,
            images_sent=count_images(messages),
        )
        return Completion(
            text=text,
            usage=usage,
            latency_s=time.perf_counter() - start,
            model=self.name,
            finish_reason=finish,
            notes=notes,
        )


def load_vlm_processor(
    source: str, *, trust_remote_code: bool = False, max_pixels: int | None = None
) -> tuple[Any, list[str]]:
    """Load the processor of a vision-language checkpoint; returns ``(processor, notes)``.

    Falls back to an image-only processor for architectures whose stock processor needs
    torchvision for videos (noted in ``notes``). ``max_pixels`` caps the area of a resized image.
    """
    transformers = require("transformers", "hf", "local transformers models")
    notes: list[str] = []
    try:
        processor = transformers.AutoProcessor.from_pretrained(source, trust_remote_code=trust_remote_code)
    except (ImportError, ValueError, TypeError, OSError) as exc:
        try:
            config = transformers.AutoConfig.from_pretrained(source, trust_remote_code=trust_remote_code)
        except OSError:
            raise ConfigError(f"cannot load the processor of {source!r}: {exc}") from exc
        if config.model_type not in _NO_VIDEO_FALLBACK:
            raise ConfigError(f"cannot load the processor of {source!r}: {exc}") from exc
        from eviseek.models._hf_compat import NoVideoQwen3VLProcessor

        processor = NoVideoQwen3VLProcessor.from_directory(source)
        notes.append(f"loaded an image-only processor ({type(exc).__name__}: {exc})")
    if max_pixels is not None:
        image_processor = processor.image_processor
        size = dict(getattr(image_processor, "size", None) or {})
        size["longest_edge"] = max_pixels
        size["shortest_edge"] = min(int(size.get("shortest_edge") or max_pixels), max_pixels)
        image_processor.size = size
    return processor, notes


def to_hf_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Turn eviseek messages into the dicts transformers chat templates read (images as PIL)."""
    out: list[dict[str, Any]] = []
    for msg in messages:
        if isinstance(msg.content, str):
            content: list[dict[str, Any]] = [{"type": "text", "text": msg.content}]
        else:
            content = []
            for part in msg.content:
                if isinstance(part, ImagePart):
                    content.append({"type": "image", "image": part.image.to_pil()})
                else:
                    content.append({"type": "text", "text": part.text})
        out.append({"role": msg.role, "content": content})
    return out


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), tokenizer):
        value = getattr(source, "eos_token_id", None)
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list):
            ids.update(v for v in value if isinstance(v, int))
    return ids


def _reasoning_tokens(tokenizer: Any, text: str) -> int | None:
    """Tokens of a ``<think>...</think>`` block in the reply; ``None`` when there is none."""
    start, end = text.find("<think>"), text.find("</think>")
    if start < 0 or end < start:
        return None
    return len(tokenizer.encode(text[start : end + len("</think>")], add_special_tokens=False))

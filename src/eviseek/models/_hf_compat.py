"""Workarounds that let transformers vision-language processors run on a machine without torchvision.

This module imports transformers at module level on purpose: only code that already needs the
``hf`` extra imports it (lazily, inside functions).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from transformers import AutoImageProcessor, AutoTokenizer, Qwen3VLProcessor


class NoVideoQwen3VLProcessor(Qwen3VLProcessor):
    """A Qwen3-VL processor that works with images only.

    The stock processor insists on a video processor, and the only video processor Qwen3-VL has
    needs torchvision, which has no CPU build on some machines. Images do not need it, so this
    subclass accepts ``video_processor=None`` and refuses videos with a clear message instead.
    """

    def check_argument_for_proper_class(self, argument_name: str, argument: Any) -> Any:
        """Accept a missing video processor; check every other argument as the parent does."""
        if argument_name == "video_processor" and argument is None:
            return None
        return super().check_argument_for_proper_class(argument_name, argument)

    def __call__(self, images: Any = None, text: Any = None, videos: Any = None, **kwargs: Any) -> Any:
        """Tokenize text and images; raise a clear error for videos (no video processor here)."""
        if videos is not None and self.video_processor is None:
            raise ValueError(
                "this processor was built without a video processor (torchvision is missing); "
                "pass images only, or install torchvision to process videos"
            )
        return super().__call__(images=images, text=text, videos=videos, **kwargs)

    def save_pretrained(self, save_directory: str | Path, **kwargs: Any) -> list[str]:  # type: ignore[override]
        """Save the tokenizer, the image processor and the chat template (there is no video processor).

        The stock method iterates over every sub-processor and fails on the missing one. Load the
        result back with :meth:`from_directory`.
        """
        out = Path(save_directory)
        out.mkdir(parents=True, exist_ok=True)
        files = list(self.tokenizer.save_pretrained(str(out)))
        files += list(self.image_processor.save_pretrained(str(out)))
        if isinstance(self.chat_template, str):
            (out / "chat_template.jinja").write_text(self.chat_template, encoding="utf-8")
            files.append(str(out / "chat_template.jinja"))
        return [str(f) for f in files]

    @classmethod
    def from_directory(cls, path: str | Path, **kwargs: Any) -> NoVideoQwen3VLProcessor:
        """Build the processor from a saved model directory without touching any video processor.

        The image processor is loaded with the PIL backend so torchvision is never imported.
        """
        tokenizer = AutoTokenizer.from_pretrained(str(path), **kwargs)
        image_processor = AutoImageProcessor.from_pretrained(str(path), backend="pil", **kwargs)
        template = _read_chat_template(Path(path)) or tokenizer.chat_template
        return cls(
            image_processor=image_processor,
            tokenizer=tokenizer,
            video_processor=None,
            chat_template=template,
        )


def _read_chat_template(path: Path) -> str | None:
    """The chat template saved next to a processor (``chat_template.jinja``), if any."""
    jinja = path / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8")
    return None

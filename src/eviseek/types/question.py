"""Questions and their answer contracts."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from eviseek.types.image import Image

AnswerKind = Literal["option", "yes_no", "integer", "sequence", "text", "bbox"]


class AnswerContract(BaseModel):
    """What shape an answer must take, shown to the model and used by the scorer."""

    kind: AnswerKind = "option"
    options: list[str] | None = None
    """Allowed answers for ``option`` and ``yes_no`` questions, in display order."""
    format_hint: str = ""
    """A one-line description of the expected format, e.g. ``"bottom-to-top, comma-separated"``."""
    lettered: bool = True
    """Whether prompts letter the options ``(A) ... (B) ...``. Off for a benchmark whose scorer
    does not read eviseek's letters (ESI-Bench: its tasks letter their options themselves, or
    not at all)."""
    task_format: str = ""
    """The benchmark task's own answer format, shown instead of eviseek's (ESI-Bench: the
    answer field and option lines of the task's prompt)."""

    @model_serializer(mode="wrap")
    def _without_default_display(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Saved without the two display fields at their defaults, so a question written before
        # they existed serialises as it did (a run's questions hash, and so resuming it, holds).
        data: dict[str, Any] = handler(self)
        if self.lettered:
            data.pop("lettered", None)
        if not self.task_format:
            data.pop("task_format", None)
        return data

    def describe(self) -> str:
        """A short human-readable statement of the contract for prompts."""
        if self.task_format:
            return self.task_format
        if self.options:
            if self.lettered:
                opts = "; ".join(f"({chr(65 + i)}) {o}" for i, o in enumerate(self.options))
            else:
                opts = "; ".join(self.options)
            base = f"Choose one of: {opts}."
        elif self.kind == "integer":
            base = "Answer with a single integer."
        elif self.kind == "sequence":
            base = "Answer with an ordered list of names."
        else:
            base = "Answer briefly."
        return f"{base} {self.format_hint}".strip()


class Question(BaseModel):
    """One question for an agent: the text, how to answer it, and where it is asked."""

    id: str
    text: str
    contract: AnswerContract = Field(default_factory=AnswerContract)
    family: str = ""
    subcategory: str = ""
    ground_truth: str | list[str] | None = None
    """The correct answer; a list when several answers are accepted (e.g. stacking orders)."""
    guidance: str = ""
    """Which observations or physical tests can settle the question (task advice)."""
    reference_images: list[Image] = Field(default_factory=list)
    """Task-supplied images the agent may see (e.g. the scene before an unobserved change)."""
    initial_image: Image | None = None
    env_id: str | None = None
    """Registered environment id that can host this question, e.g. ``eviseek/Tabletop-v0``."""
    scene: dict[str, Any] = Field(default_factory=dict)
    """Everything the environment needs to rebuild the scene for this question."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    benchmark: str | None = None
    """The registered benchmark the question belongs to (``house``, ``esibench``, a plugin's
    name), recorded when its benchmark loads it; ``None`` for a question of no benchmark (a
    hand-written file), which its answer contract scores. Every later reader (``eviseek
    score``, ``report``, ``replay``, ``eval`` of a saved file) looks the benchmark up by this
    name instead of recognising it again."""

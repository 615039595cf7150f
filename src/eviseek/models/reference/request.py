"""One call as the reference policy sees it: stage, question, metadata, analysed images and text."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from eviseek.models.reference.house import HouseAsk, read_ask, solve_house
from eviseek.models.reference.motion import solve_slide_frames
from eviseek.models.reference.solve import Verdict, solve
from eviseek.models.reference.task import Task, read_task
from eviseek.models.reference.vision import View, analyse
from eviseek.types import ChatMessage, GenerateConfig, Image, message_images

HISTORY_ACTION = re.compile(
    r"^Step \d+: action=([a-z_]+)(?:\([^)]*\))?(?:\s*\(([^)]*)\))?\s*result=\[([^\]]*)\]", re.M
)

Handler = Callable[["Request"], "dict[str, Any] | str"]


class Request:
    """One call as the policy sees it: stage, question, metadata, images and text."""

    def __init__(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> None:
        self.messages = list(messages)
        self.config = config
        self.stage = config.stage or ""
        self.meta: dict[str, Any] = dict(config.metadata or {})
        self.images: list[Image] = message_images(self.messages)
        self.text = "\n".join(m.text() for m in self.messages if m.role == "user")
        question = str(self.meta.get("question") or "")
        if not question:
            found = re.findall(r"^Question:\s*(.+)$", self.text, re.M)
            question = found[-1].strip() if found else self.text[-300:]
        advice = re.findall(r"^Advice for this task:\s*(.+)$", self.text, re.M)
        self.task: Task = read_task(question, self.meta, advice[-1] if advice else "")
        self.task.notes = _own_notes(self.meta)
        self.house: HouseAsk | None = read_ask(question, list(self.task.options))
        """The house question asked, when it is one (read by the house reader instead)."""
        self._views: list[View] | None = None

    @property
    def views(self) -> list[View]:
        """Every attached image, analysed, in order."""
        if self._views is None:
            balance = self.task.light_changed
            self._views = [analyse(img, balance=balance) for img in self.images]
        return self._views

    @property
    def references(self) -> list[bool]:
        """Which attached images are task reference images (frame id -1 in the metadata)."""
        ids = self.meta.get("frame_ids")
        if isinstance(ids, list) and len(ids) == len(self.images):
            return [int(i) == -1 for i in ids]
        return [False] * len(self.images)

    def verdict(self) -> Verdict:
        """The answer the attached images and the reported outcomes support; a call on an
        action's frames (``motion_frames``) is answered from those frames alone."""
        if self.house is not None:
            return solve_house(self.house, self.views)
        n = int(self.meta.get("motion_frames") or 0)
        if n >= 2 and len(self.views) >= n:
            seen = solve_slide_frames(self.task, self.views[-n:])
            if seen is not None:
                seen.view = None if seen.view is None else len(self.views) - n + seen.view
                return seen
        memory = "\n".join(self.memory)
        return solve(self.task, self.views, text=self.text + "\n" + memory, references=self.references)

    @property
    def memory(self) -> list[str]:
        """The seeker's working memory for the active subtask (what was tried, what came of it)."""
        lines = self.meta.get("working_memory", self.meta.get("memory"))
        return [str(x) for x in lines] if isinstance(lines, list) else []

    @property
    def trail(self) -> list[str]:
        """Recent atomic actions with their feedback, as the seeker is shown them."""
        lines = self.meta.get("trail")
        return [str(x) for x in lines] if isinstance(lines, list) else []

    @property
    def current(self) -> View | None:
        """The last attached image (agents attach the current view last)."""
        return self.views[-1] if self.views else None


def _own_notes(meta: dict[str, Any]) -> str:
    """The demands, subtask goal and memory lines a request repeats, as one text."""
    parts: list[str] = []
    for d in meta.get("demands") or []:
        if isinstance(d, dict):
            parts.append(str(d.get("text", "")))
    subtask = meta.get("subtask")
    if isinstance(subtask, dict):
        parts.append(str(subtask.get("goal", "")))
    for key in ("memory", "working_memory"):
        lines = meta.get(key)
        if isinstance(lines, list):
            parts.extend(str(x) for x in lines)
    return "\n".join(parts)

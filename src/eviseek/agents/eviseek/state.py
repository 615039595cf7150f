"""The running state of one EviSeek episode, shared by its stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eviseek.agents.common import StageCaller, contract_metadata
from eviseek.agents.eviseek.board import EvidenceBoard
from eviseek.agents.eviseek.config import EviSeekConfig
from eviseek.agents.eviseek.intents import IntentLibrary
from eviseek.agents.eviseek.planner import EviSeekPlan, Subtask
from eviseek.agents.eviseek.pose import PoseTracker
from eviseek.envs.base import AsyncEnv
from eviseek.types import ActionSpec, Image, Question, Trajectory


@dataclass
class WorkingMemory:
    """The active subtask's transient notes; dropped when the subtask closes (never on the board)."""

    lines: list[str] = field(default_factory=list)
    limit: int = 8

    def add(self, line: str) -> None:
        """Record one attempt and what came of it."""
        self.lines.append(line)

    def recent(self) -> list[str]:
        """The last few attempts, oldest first."""
        return self.lines[-self.limit :]


@dataclass
class Episode:
    """Everything the stages of one episode read and update."""

    cfg: EviSeekConfig
    question: Question
    env: AsyncEnv
    caller: StageCaller
    traj: Trajectory
    legal: list[ActionSpec]
    library: IntentLibrary
    view: Image
    frame_id: int
    plan: EviSeekPlan
    """The trajectory's plan record (``traj.plan``, the same object), updated in place."""
    board: EvidenceBoard = field(default_factory=EvidenceBoard)
    pose: PoseTracker = field(default_factory=PoseTracker)
    references: list[Image] = field(default_factory=list)
    trail: list[str] = field(default_factory=list)
    ended: bool = False
    """The environment ended the episode (terminated or truncated)."""
    motion: list[tuple[Image, int]] = field(default_factory=list)
    """Frames of an action that set things moving (a slide), oldest first, ending with the frame
    after it; when set, the episode ends and the answer call is made on them (paper app. E)."""
    _legal_dump: tuple[list[ActionSpec], list[dict[str, Any]]] | None = None
    _memory: WorkingMemory | None = None

    def working_memory(self) -> WorkingMemory:
        """The seeker's working memory for a subtask that opens now: a fresh one, or (with
        ``memory_scope="episode"``) the one memory every subtask of the episode shares."""
        if self.cfg.memory_scope == "subtask":
            return WorkingMemory(limit=self.cfg.memory_lines)
        if self._memory is None:
            self._memory = WorkingMemory(limit=self.cfg.memory_lines)
        return self._memory

    def legal_dump(self) -> list[dict[str, Any]]:
        """The legal actions as plain dicts, rebuilt only when the list is replaced."""
        if self._legal_dump is None or self._legal_dump[0] is not self.legal:
            self._legal_dump = (self.legal, [s.model_dump() for s in self.legal])
        return self._legal_dump[1]

    @property
    def steps_used(self) -> int:
        """Atomic actions executed so far."""
        return len(self.traj.steps)

    @property
    def remaining(self) -> int:
        """Steps left in the budget."""
        return max(0, self.cfg.budget - self.steps_used)

    def base_metadata(self) -> dict[str, Any]:
        """Request metadata every stage call carries (all of it is also in the prompt text)."""
        return contract_metadata(self.question)

    def demand_of(self, subtask: Subtask) -> dict[str, Any] | None:
        """The subtask's demand as a plain dict (``None`` without demands)."""
        if self.cfg.no_demands:
            return None
        d = self.plan.demand(subtask.demand)
        return d.model_dump() if d is not None else None

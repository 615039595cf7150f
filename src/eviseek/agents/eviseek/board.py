"""The evidence board: retained observations and outcomes, each with its provenance.

Only what the keeper chose is here; views that were not kept served control and are left out of
the answer context. Every change is also a :class:`~eviseek.types.BoardEvent` in the trajectory,
so the board can be rebuilt from a saved trajectory (board replay).
"""

from __future__ import annotations

from collections import defaultdict

from eviseek.types import BoardEvent, EvidenceItem, Feedback, Image, Trajectory


class EvidenceBoard:
    """Retained evidence of one episode, recorded into ``trajectory.board`` as it changes."""

    def __init__(self, trajectory: Trajectory | None = None) -> None:
        self.trajectory = trajectory
        self.items: list[EvidenceItem] = []

    def __len__(self) -> int:
        return len(self.items)

    def add(
        self,
        *,
        frame_id: int,
        step_index: int,
        image: Image | None,
        outcome: Feedback | None,
        intent: str | None,
        subtask: int | None,
        demand: int | None,
        note: str,
    ) -> EvidenceItem:
        """Retain one observation (and the outcome that produced it) with its provenance."""
        item = EvidenceItem(
            id=len(self.items) + 1,
            frame_id=frame_id,
            step_index=step_index,
            image=image,
            outcome=outcome,
            intent=intent,
            subtask=subtask,
            demand=demand,
            note=note.strip(),
        )
        self.items.append(item)
        if self.trajectory is not None:
            self.trajectory.board.append(BoardEvent(kind="add", item=item, at_step=step_index))
        return item

    def bind(self, subtask: int, demand: int | None, at_step: int) -> list[EvidenceItem]:
        """Close ``subtask``: bind its retained items to ``demand`` (recorded as ``bind`` events)."""
        bound = [it for it in self.items if it.subtask == subtask]
        for it in bound:
            it.demand = demand
            if self.trajectory is not None:
                self.trajectory.board.append(BoardEvent(kind="bind", item=it.model_copy(), at_step=at_step))
        return bound

    def select(self, capacity: int) -> list[EvidenceItem]:
        """The items for the answering call: at most ``capacity``, in the order they were found.

        Repeated frames are shown once. When there are more items than room, the demands take
        turns (newest item of each first), so no demand loses all its evidence to another.
        """
        unique: dict[int, EvidenceItem] = {}
        for it in self.items:
            if it.frame_id in unique:
                prev = unique[it.frame_id]
                if it.note and it.note not in prev.note:
                    prev = prev.model_copy(update={"note": f"{prev.note} / {it.note}".strip(" /")})
                unique[it.frame_id] = prev
            else:
                unique[it.frame_id] = it
        items = list(unique.values())
        if len(items) <= capacity:
            return items
        groups: dict[int | None, list[EvidenceItem]] = defaultdict(list)
        for it in reversed(items):
            groups[it.demand].append(it)
        chosen: list[EvidenceItem] = []
        while len(chosen) < capacity:
            for key in list(groups):
                if groups[key] and len(chosen) < capacity:
                    chosen.append(groups[key].pop(0))
            if not any(groups.values()):
                break
        return sorted(chosen, key=lambda it: (it.step_index, it.id))

    @classmethod
    def from_trajectory(cls, trajectory: Trajectory) -> EvidenceBoard:
        """Rebuild the final board from a trajectory's recorded events (no trajectory attached)."""
        board = cls()
        by_id: dict[int, EvidenceItem] = {}
        for ev in trajectory.board:
            if ev.kind == "add":
                by_id[ev.item.id] = ev.item.model_copy()
            elif ev.kind == "bind" and ev.item.id in by_id:
                by_id[ev.item.id].demand = ev.item.demand
            elif ev.kind == "remove":
                by_id.pop(ev.item.id, None)
        board.items = [by_id[k] for k in sorted(by_id)]
        return board

"""Split retention (the paper's stage prompts): the seeker keeps the current view, a curator
picks intermediate frames.

With ``EviSeekConfig.retention="split"`` the merged keeper is not called. Instead:

- each seeker reply carries a keep decision about the view it was shown (the current view, i.e.
  the end of the previous intent or the initial view); :func:`keep_current` puts that view on the
  board, so a view the seeker stops on is never lost;
- after each executed intent, :func:`curate` shows a curator call the frames the intent passed
  through before its last one (up to ``keep_candidates``, evenly spaced) and adds the ones it
  picks. The last frame is the seeker's to judge at its next decision; when there is no next
  decision (the budget is spent, the environment ended the episode, or the subtask's decision cap
  is reached with no subtask left), the curator is offered the last frame too, so it is not lost.

Both write full provenance (frame, step, outcome, intent, subtask, demand, note).
"""

from __future__ import annotations

from eviseek.agents.eviseek.intents import CompiledIntent
from eviseek.agents.eviseek.keeper import ask_review, candidate_steps, keep_step
from eviseek.agents.eviseek.planner import Subtask
from eviseek.agents.eviseek.seeker import SeekDecision
from eviseek.agents.eviseek.state import Episode, WorkingMemory
from eviseek.agents.replies import CurateReply
from eviseek.types import EvidenceItem, Stage, StepRecord


def keep_current(ep: Episode, subtask: Subtask, decision: SeekDecision) -> EvidenceItem | None:
    """Put the view the seeker decided on onto the board if its reply asked to keep it."""
    if not decision.keep or ep.view is None:
        return None
    last = ep.traj.steps[-1] if ep.traj.steps else None
    from_step = last if last is not None and last.frame_id == ep.frame_id else None
    return ep.board.add(
        frame_id=ep.frame_id,
        step_index=from_step.index if from_step is not None else 0,
        image=ep.view,
        outcome=from_step.feedback if from_step is not None else None,
        intent=from_step.intent if from_step is not None else None,
        subtask=subtask.id,
        demand=None if ep.cfg.no_demands else subtask.demand,
        note=decision.keep_note or "kept by the seeker",
    )


async def curate(
    ep: Episode,
    subtask: Subtask,
    compiled: CompiledIntent,
    steps: list[StepRecord],
    memory: WorkingMemory | None = None,
    *,
    last_chance: bool = False,
) -> list[EvidenceItem]:
    """Ask the curator about an intent's intermediate frames; add the picked ones to the board.

    ``last_chance``: no seeker decision follows, so the intent's last frame is offered as well.
    Otherwise an intent of one action has no intermediate frame, and no call is made.
    """
    candidates = candidate_steps(steps if last_chance else steps[:-1], ep.cfg.keep_candidates)
    if not candidates:
        return []
    if last_chance:
        ep.traj.log(
            "curate_last_frame",
            "no seeker decision follows this intent: its last frame is offered to the curator",
            stage=Stage.CURATE,
            at_step=ep.steps_used,
        )
    reply = await ask_review(
        ep,
        subtask,
        compiled,
        steps,
        candidates,
        memory,
        stage=Stage.CURATE,
        reply=CurateReply,
        fallback="keep no intermediate frame",
        includes_last=last_chance,
    )
    if reply is None:
        return []  # unreadable: the seeker still judges the intent's last view
    picks = sorted({i for i in reply.frames if 1 <= i <= len(candidates)})
    if len(picks) != len(set(reply.frames)):
        ep.traj.log(
            "curate_repaired",
            f"curator named views {reply.frames} but only 1..{len(candidates)} exist; kept the valid ones",
            stage=Stage.CURATE,
            at_step=ep.steps_used,
        )
    note = reply.note or "picked by the curator"
    return [keep_step(ep, candidates[i - 1], compiled, subtask, note) for i in picks]

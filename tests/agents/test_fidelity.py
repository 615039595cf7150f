"""Baseline behaviours fixed in the paper-fidelity review, each tied to the paper section it follows."""

from __future__ import annotations

from eviseek.agents import make_agent
from eviseek.envs import as_async
from eviseek.types import Action, Feedback, Question
from tests.agents.gridworld import GridWorld
from tests.agents.scripts import StageScript


class VerboseGrid(GridWorld):
    """A grid world whose every outcome carries a long task state (like a stacking report)."""

    def _apply(self, action: Action) -> Feedback:
        fb = super()._apply(action)
        fb.state["report"] = "settled; " * 40 + "END-OF-REPORT"
        return fb


async def test_single_model_history_keeps_the_whole_feedback(question: Question) -> None:
    # Appendix E: the 220-character cut is how EviSeek presents the shared feedback; the
    # Single-model text history carries the task's result as the benchmark serialises it.
    reply = {"action": "turn_left", "answer": "yes", "confidence": 0.1}
    script = StageScript(single_step=[reply, reply])
    await make_agent("single-model", budget=2).run(as_async(VerboseGrid()), question, script.model())
    text = script.calls("single_step")[1][1][-1].text()
    assert "END-OF-REPORT" in text

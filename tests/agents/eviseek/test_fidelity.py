"""Behaviours fixed in the paper-fidelity review, each tied to the paper section it follows."""

from __future__ import annotations

from eviseek.types import Action, Feedback, Question
from tests.agents.eviseek.test_agent import run, seek_by_subtask, standard_script
from tests.agents.gridworld import GridWorld


async def test_keeper_sees_the_subtasks_working_memory(question: Question) -> None:
    # Section 4.3: pi_keep is conditioned on W_t, the active subtask's working memory.
    script = standard_script(
        seek=seek_by_subtask(
            {
                1: [
                    {"intent": "FACE", "args": {"direction": "left"}},
                    {"intent": "SWEEP", "args": {"turns": 2}},
                ],
                2: [{"intent": "FACE", "args": {"direction": "right"}}],
            }
        ),
        keep=[{"keep": False}, {"keep": True, "note": "wide view"}, {"keep": True, "note": "close"}],
    )
    await run(question, script)
    first, second, third = (msgs[-1].text() for _cfg, msgs in script.calls("keep"))
    assert "Earlier attempts for this subtask" not in first
    tried = "FACE {'direction': 'left'}: 2 action(s); nothing kept"
    assert f"Earlier attempts for this subtask:\n- {tried}" in second
    assert script.calls("keep")[1][0].metadata["working_memory"] == [tried]
    # Working memory is per subtask: the keeper of subtask 2 starts with none.
    assert "Earlier attempts" not in third


async def test_seeker_gets_the_tasks_exploration_advice(question: Question) -> None:
    # Appendix D: EviSeek receives the same exploration advice as Single-model, distributed
    # across its stages; the seeker, which picks the actions, must see it.
    script = standard_script()
    await run(question, script)
    cfg, msgs = script.calls("seek")[0]
    assert "Advice for this task: Look at both objects from above." in msgs[-1].text()
    assert cfg.metadata["guidance"] == question.guidance


class StiffGrid(GridWorld):
    """A grid world whose camera refuses its first ``turn_down`` and every ``move_forward``."""

    def __init__(self) -> None:
        super().__init__()
        self.refused_tilt = False

    def _apply(self, action: Action) -> Feedback:
        if action.name == "turn_down" and not self.refused_tilt:
            self.refused_tilt = True
            return Feedback(operation="turn_down", success=False, reason="pitch bound")
        if action.name == "move_forward":
            return Feedback(operation="move_forward", success=False, reason="blocked")
        return super()._apply(action)


async def test_geometry_complete_intents_run_to_completion_after_a_failed_primitive(
    question: Question,
) -> None:
    # Appendix F: target-tracking intents (APPROACH, ORBIT) may stop early; geometry-complete
    # ones run to the end of their compiled sequence.
    script = standard_script(
        seek=seek_by_subtask(
            {
                1: [{"intent": "RISE_TOPDOWN", "args": {"degrees": 45}}],
                2: [{"intent": "APPROACH", "target": "red cube", "args": {"steps": 3}}],
            }
        )
    )
    traj = await run(question, script, env=StiffGrid())
    names = [s.action.name for s in traj.steps]
    assert names == ["move_up"] * 3 + ["turn_down"] * 3 + ["move_forward"]
    assert not traj.steps[3].feedback.success
    rise, approach = (d for d in traj.plan.decisions if d.intent not in ("DONE", "BLOCKED"))
    assert (rise.intent, rise.executed, rise.aborted) == ("RISE_TOPDOWN", 6, None)
    assert (approach.executed, approach.aborted) == (1, "move_forward failed")

"""Behaviours fixed in the paper-fidelity review, each tied to the paper section it follows."""

from __future__ import annotations

from eviseek.types import Question
from tests.agents.eviseek.test_agent import run, seek_by_subtask, standard_script


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

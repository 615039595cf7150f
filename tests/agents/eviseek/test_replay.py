"""Board replay: re-answer a saved trajectory with another memory, without the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from eviseek.agents import replay_answer
from eviseek.errors import ConfigError
from eviseek.types import Question, Trajectory
from tests.agents.eviseek.test_agent import run, standard_script
from tests.agents.scripts import StageScript


@pytest.fixture
async def saved(question: Question, tmp_path: Path) -> tuple[Trajectory, Path]:
    traj = await run(question, standard_script())
    out = tmp_path / "episodes" / "eviseek" / question.id
    traj.save(out)
    return traj, out


@pytest.mark.parametrize(
    ("memory", "frames"),
    [("board", [6, 8]), ("recent", [3, 4, 5, 6, 7, 8]), ("uniform", [0, 1, 2, 3, 4, 5, 6, 7, 8])],
)
async def test_replay_changes_only_the_answer_memory(
    question: Question, saved: tuple[Trajectory, Path], memory: str, frames: list[int]
) -> None:
    online, path = saved
    script = StageScript(answer=[{"answer": "no"}])
    replayed = await replay_answer(path, question, script.model(), memory)  # type: ignore[arg-type]
    assert replayed.agent == f"eviseek/replay-{memory}" and replayed.config["replay_memory"] == memory
    assert replayed.answer_frame_ids == frames
    ((_, messages),) = script.calls("answer")
    sent = messages[-1].images()
    assert len(sent) == len(frames) and all(img.loaded for img in sent)  # pixels read back from disk
    # Exploration is reused as recorded: same steps and exploration calls; one new answering call.
    assert [s.action for s in replayed.steps] == [s.action for s in online.steps]
    assert [c.stage for c in replayed.calls] == [c.stage for c in online.calls]
    assert replayed.calls[-1].output == '{"answer": "no"}'
    assert replayed.result is not None and replayed.result.answer == "no" and replayed.result.steps == 8
    assert online.result is not None and online.result.answer == "yes"  # the original is untouched


async def test_board_replay_reproduces_the_online_answer_context(
    question: Question, saved: tuple[Trajectory, Path]
) -> None:
    online, path = saved
    script = StageScript(answer=[{"answer": "yes"}])
    await replay_answer(path, question, script.model(), "board")
    online_text = next(c for c in online.calls if c.stage == "answer").messages[-1].text()
    assert script.calls("answer")[0][1][-1].text() == online_text


async def test_replay_refuses_another_question(question: Question, saved: tuple[Trajectory, Path]) -> None:
    _, path = saved
    other = question.model_copy(update={"id": "other"})
    with pytest.raises(ConfigError, match="trajectory is for question"):
        await replay_answer(path, other, StageScript().model(), "board")
    with pytest.raises(ConfigError, match="unknown memory"):
        await replay_answer(path, question, StageScript().model(), "everything")  # type: ignore[arg-type]

"""Runs saved while ``Trajectory.plan`` was a plain dict still load, resume, score, report, view
and replay now that it is a typed record.

The fixture is a run directory written by ``eviseek eval --agents
passive,single-model,eviseek,eviseek-nav --model reference --dataset tabletop:test --limit 1
--env-workers 0 -c 1`` at commit 7a8d928 (the last one with dict plans), archived as it was.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from eviseek.agents import replay_answer
from eviseek.eval.config import load_config
from eviseek.eval.report import build_report
from eviseek.eval.runner import run_eval
from eviseek.eval.scoring import rescore_run
from eviseek.models import get_model
from eviseek.types import Trajectory
from eviseek.types.plans import EviSeekPlan, ModePlan, SingleModelPlan
from eviseek.types.question_file import read_questions
from eviseek.viewer import ImageSourcer, build_episode_view, load_trajectory

FIXTURE = Path(__file__).parents[1] / "fixtures" / "dict_plans" / "tabletop-run.tar.gz"
RECORDS = {
    "passive": ModePlan,
    "single-model": SingleModelPlan,
    "eviseek": EviSeekPlan,
    "eviseek-nav": EviSeekPlan,
}


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    with tarfile.open(FIXTURE) as archive:
        archive.extractall(run, filter="data")
    return run


def _trajectory_files(run: Path) -> list[Path]:
    return sorted(run.glob("episodes/*/*/trajectory.json"))


def test_old_trajectories_load_as_typed_plans_and_save_byte_for_byte(old_run: Path, tmp_path: Path) -> None:
    files = _trajectory_files(old_run)
    assert len(files) == 4
    for path in files:
        traj = Trajectory.load(path.parent)
        assert isinstance(traj.plan, RECORDS[traj.agent]), traj.agent
        # Nothing is lost or reordered: the typed record writes back the dict the old agent wrote.
        assert traj.model_dump_json(indent=1) == path.read_text(encoding="utf-8")
    nav = Trajectory.load(next(old_run.glob("episodes/eviseek-nav/*")))
    assert isinstance(nav.plan, EviSeekPlan) and nav.plan.coverage and nav.plan.decisions
    assert nav.plan.coverage[-1].trigger is not None and nav.plan.decisions[0].intent


@pytest.mark.slow
def test_an_old_run_rescores_resumes_reports_and_views(old_run: Path, tmp_path: Path) -> None:
    rescored = rescore_run(old_run)
    assert len(rescored.results) == 4 and not rescored.changed and not rescored.missing
    # Resuming runs nothing: every episode is finished.
    outcome = run_eval(load_config(old_run), old_run, questions=read_questions(old_run), progress=False)
    assert (outcome.ran, outcome.skipped, outcome.failed) == (0, 4, 0)
    files = build_report([old_run], tmp_path / "report", n_resamples=200, episodes=True)
    assert len(files.episode_pages) == 4
    nav_page = next(p for p in files.episode_pages if "eviseek-nav" in str(p)).read_text(encoding="utf-8")
    assert 'data-testid="plan"' in nav_page
    nav, base = load_trajectory(next(old_run.glob("episodes/eviseek-nav/*")))
    view = build_episode_view(nav, ImageSourcer(base, tmp_path / "nav.html"))
    assert isinstance(nav.plan, EviSeekPlan) and not view.warnings and view.plan_json is None
    assert [s.id for s in view.subtasks] == [s.id for s in nav.plan.subtasks] and view.subtasks
    assert [d.id for d in view.demands] == [d.id for d in nav.plan.demands] and view.mode == "active"


async def test_an_old_eviseek_episode_replays(old_run: Path) -> None:
    (question,) = read_questions(old_run)
    folder = next(old_run.glob("episodes/eviseek/*"))
    saved = Trajectory.load(folder)
    replayed = await replay_answer(folder, question, get_model("reference"), "board")
    assert isinstance(replayed.plan, EviSeekPlan) and replayed.plan.model_dump() == saved.plan.model_dump()
    assert replayed.result is not None and saved.result is not None
    assert replayed.result.answer == saved.result.answer

"""EXPRESS-Bench's metrics from saved trajectories and judge grades.

Per episode i, with the judge's grounding g_i in {0, 0.5, 1} and score s_i in 1..5 (EXPRESS-Bench's
``evaluation.py`` in its public repository, HCPLab-SYSU/EXPRESS-Bench):

    C      = mean(100 * g_i * s_i / 5)              grounded correctness
    C*     = mean(100 * s_i / 5)                    answer-only correctness
    E_path = mean(100 * g_i * s_i / 5 * l_i / max(p_i, l_i))
    d_T    = mean geodesic distance (metres) from the end point to the target

with ``l_i`` the shortest path from the start to the target (``metadata["shortest_path_m"]``) and
``p_i`` the agent's path length: the summed horizontal distance between the true poses it passed
(``Trajectory.initial_pose`` then each ``StepRecord.true_pose``). For house questions d_T is
computed offline on the house's occupancy grid; for other environments it is the shortest path
itself when the agent never moved, else it is read from the last step's
``feedback.state["distance_to_target"]``, which the Habitat bridge reports when an episode ends in
the environment (``stop`` or the budget); an episode that ends by answering mid-walk has none. Closed-form
questions (any contract but free text) are also scored exactly (``EpisodeResult.correct``).
Episodes the judge has not graded are left out of C, C* and E_path and counted in ``ungraded``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from eviseek import env_ids
from eviseek.eval.express.judge import ExpressGrade, load_express_grades
from eviseek.eval.judging import load_questions, run_trajectories
from eviseek.types import Question, Trajectory

HOUSE_ENV = env_ids.HOUSE


class EpisodeNav(BaseModel):
    """Where an episode went: path length, shortest path, end point and distance to the target."""

    path_m: float
    shortest_m: float | None
    end: tuple[float, float] | None
    d_T: float | None


def is_navigation_question(question: Question) -> bool:
    """Whether a question carries what EXPRESS-Bench's metrics need (a target and a shortest path)."""
    return "shortest_path_m" in question.metadata


def path_length(traj: Trajectory) -> float:
    """Horizontal metres between consecutive true poses (the start, then every step)."""
    poses = [traj.initial_pose] if traj.initial_pose is not None else []
    poses += [s.true_pose for s in traj.steps if s.true_pose is not None]
    return sum(math.hypot(b.x - a.x, b.y - a.y) for a, b in itertools.pairwise(poses))


class _Grids:
    """Occupancy grids of house questions, built once per question."""

    def __init__(self) -> None:
        self._grids: dict[str, object] = {}

    def distance(self, question: Question, end: tuple[float, float]) -> float | None:
        from eviseek.envs.house.grid import OccupancyGrid
        from eviseek.envs.house.spec import HouseSpec

        if question.id not in self._grids:
            self._grids[question.id] = OccupancyGrid(HouseSpec.from_question(question.scene))
        grid = self._grids[question.id]
        assert isinstance(grid, OccupancyGrid)
        x, y = question.metadata["target"]["position"][:2]
        d = grid.geodesic_distance(end, (float(x), float(y)))
        return d if math.isfinite(d) else None


def episode_nav(traj: Trajectory, question: Question, grids: _Grids | None = None) -> EpisodeNav:
    """The navigation numbers of one episode."""
    last = next((s.true_pose for s in reversed(traj.steps) if s.true_pose is not None), traj.initial_pose)
    end = (last.x, last.y) if last is not None else None
    shortest = question.metadata.get("shortest_path_m")
    d_t: float | None = None
    if question.env_id == HOUSE_ENV and end is not None and question.scene:
        d_t = (grids or _Grids()).distance(question, end)
    elif (
        end is not None
        and traj.initial_pose is not None
        and end == (traj.initial_pose.x, traj.initial_pose.y)
    ):
        d_t = float(shortest) if shortest is not None else None  # never moved: the start's own distance
    elif traj.steps:
        reported = traj.steps[-1].feedback.state.get("distance_to_target")
        d_t = float(reported) if isinstance(reported, (int, float)) else None
    return EpisodeNav(
        path_m=round(path_length(traj), 6),
        shortest_m=float(shortest) if shortest is not None else None,
        end=end,
        d_T=d_t,
    )


class ExpressRow(BaseModel):
    """One agent's EXPRESS-Bench numbers (0-100 for the correctness scores, metres for d_T)."""

    agent: str
    n: int
    graded: int
    C: float | None
    C_star: float | None
    E_path: float | None
    d_T: float | None
    n_d_T: int = 0
    """Episodes whose terminal distance is known (all of them for house questions)."""
    exact: float | None
    """Percent correct over closed-form questions, scored exactly; ``None`` if there are none."""
    n_exact: int
    mean_path_m: float | None
    question_only: bool = False
    """No episode moved or showed an image (a Blind system): grounding and distance do not apply."""
    ended: dict[str, int] = {}
    """How the agent's episodes ended (:func:`episode_end`), counts by reason."""


END_REASONS: tuple[str, ...] = (
    "demands covered",
    "controller stopped",
    "plan exhausted",
    "agent stopped",
    "map explored",
    "budget spent",
    "no moves",
)
"""Why an episode ended, in the order reports list them."""


def episode_end(traj: Trajectory) -> str:
    """Why an episode ended (one of :data:`END_REASONS`).

    EviSeek's navigation variant: its coverage controller judged every demand covered, or stopped
    on evidence it found sufficient, or the plan's subtasks (and replans) ran out first (``plan
    exhausted``), or the step budget did. Frontier and Single-model record their own ``ended_by``;
    an agent that never moves (Blind, Passive) ends with ``no moves``.
    """
    plan = traj.plan
    budget = traj.config.get("budget") if isinstance(traj.config, dict) else None
    spent = isinstance(budget, int) and len(traj.steps) >= budget
    checks = getattr(plan, "coverage", None)
    if isinstance(checks, list) and getattr(plan, "demands", None) is not None and checks:
        demands = {d.id for d in getattr(plan, "demands", [])}
        if demands and demands <= set(getattr(plan, "covered", []) or []):
            return "demands covered"
        if any(e.kind == "early_stop" for e in traj.events):
            return "controller stopped"
        return "budget spent" if spent else "plan exhausted"
    ended_by = getattr(plan, "ended_by", None)
    if not traj.steps and ended_by is None:
        return "no moves"
    if spent or ended_by == "budget":
        return "budget spent"
    if ended_by == "explored":
        return "map explored"
    return "agent stopped"


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def express_row(
    agent: str, episodes: Sequence[tuple[Trajectory, Question, ExpressGrade | None]]
) -> ExpressRow:
    """Aggregate one agent's episodes."""
    grids = _Grids()
    c, c_star, e_path, d_t, exact, paths = [], [], [], [], [], []
    ended: dict[str, int] = {}
    for traj, question, grade in episodes:
        why = episode_end(traj)
        ended[why] = ended.get(why, 0) + 1
        nav = episode_nav(traj, question, grids)
        paths.append(nav.path_m)
        if nav.d_T is not None:
            d_t.append(nav.d_T)
        if question.contract.kind != "text":
            exact.append(100.0 if traj.result is not None and traj.result.correct else 0.0)
        if grade is None or grade.score is None or grade.grounding is None:
            continue
        s = min(max(grade.score, 0), 5)
        ci = 100.0 * grade.grounding * s / 5
        c.append(ci)
        c_star.append(100.0 * s / 5)
        l_i = nav.shortest_m or 0.0
        weight = l_i / max(nav.path_m, l_i) if max(nav.path_m, l_i) > 0 else 1.0
        e_path.append(ci * weight)
    return ExpressRow(
        agent=agent,
        n=len(episodes),
        graded=len(c),
        C=_mean(c),
        C_star=_mean(c_star),
        E_path=_mean(e_path),
        d_T=_mean(d_t),
        n_d_T=len(d_t),
        exact=_mean(exact),
        n_exact=len(exact),
        mean_path_m=_mean(paths),
        question_only=all(not t.steps and not t.answer_images for t, _, _ in episodes),
        ended={k: ended[k] for k in END_REASONS if k in ended},
    )


def express_rows(run_dir: str | Path) -> list[ExpressRow]:
    """EXPRESS-Bench rows for every agent of a run, over its navigation questions (empty if none)."""
    questions = load_questions(run_dir)
    grades = load_express_grades(run_dir)
    by_agent: dict[str, list[tuple[Trajectory, Question, ExpressGrade | None]]] = {}
    for traj, _ in run_trajectories(run_dir):
        q = questions.get(traj.question_id)
        if q is None or not is_navigation_question(q):
            continue
        by_agent.setdefault(traj.agent, []).append((traj, q, grades.get((traj.agent, traj.question_id))))
    return [express_row(agent, eps) for agent, eps in sorted(by_agent.items())]

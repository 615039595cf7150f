"""The reference policy: pixel perception on drawn images, reply validity, no privileged access.

The episode tests run the three agents on real tabletop questions (one per subcategory of the
dev split) while every privileged path into the simulator is armed to fail the test if it is
used during a model call. Support is graded after each episode, as the harness does.
"""

from __future__ import annotations

import ast
import asyncio
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eviseek.models import get_model
from eviseek.models.reference import ReferenceModel, estimate_input_tokens
from eviseek.models.reference.solve import solve
from eviseek.models.reference.task import read_task
from eviseek.models.reference.vision import _classify, _classify_pixels, _distinct, analyse_array
from eviseek.types import ChatMessage, GenerateConfig, Image

WOOD = (204, 178, 140)


def canvas(h: int = 240, w: int = 320) -> np.ndarray:
    """A top-down tabletop: plain wood."""
    img = np.zeros((h, w, 3), dtype=np.uint8)
    img[:, :] = WOOD
    return img


def square(img: np.ndarray, cx: int, cy: int, r: int, rgb: tuple[int, int, int]) -> None:
    img[cy - r : cy + r, cx - r : cx + r] = rgb


# --------------------------------------------------------------------------------------------
# reading questions and pictures


def test_reads_every_tabletop_question_kind() -> None:
    cases = {
        "Are the red cube, the blue cone and the green cylinder arranged in a straight line on the table?": (
            "alignment",
            ["red", "blue", "green"],
        ),
        "Do the red ball, the blue cone and the green cube form an equilateral triangle, an isosceles "
        "triangle or a random triangle on the table?": ("triangle", ["red", "blue", "green"]),
        "Are the orange block and the red cube touching each other?": ("contact", ["orange", "red"]),
        "How many brown pyramids are on the table?": ("count", ["brown"]),
        "What shape is the purple object that is partly hidden behind the white board?": (
            "shape",
            ["purple"],
        ),
        "Does the green cylinder fit inside the yellow bin?": ("fit", ["green", "yellow"]),
        "If all the water in the pink bowl is poured into the purple cup, will the purple cup overflow?": (
            "overflow",
            ["pink", "purple"],
        ),
        "If the red cube is set down on the slope of the brown ramp, will it stay still without sliding?": (
            "slide",
            ["red", "brown"],
        ),
    }
    for text, (kind, colors) in cases.items():
        task = read_task(text, {"options": ["yes", "no"], "answer_kind": "yes_no"})
        if kind == "count":
            task = read_task(text, {"answer_kind": "integer"})
        assert task.kind == kind, text
        assert task.colors == colors, text
    occluded = read_task(
        "What shape is the purple object that is partly hidden behind the white board?",
        {"options": ["cube", "cone"]},
    )
    assert occluded.occluder is not None and occluded.occluder.color == "white"
    closer = read_task(
        "Which object is closer to the red pyramid: the purple cube or the green cylinder?",
        {"options": ["purple_cube", "green_cylinder"], "answer_kind": "option"},
    )
    assert closer.kind == "distance" and closer.prefer_smaller
    assert closer.reference is not None and closer.reference.name == "red_pyramid"
    assert [o.name for o in closer.objects] == ["purple_cube", "green_cylinder"]


def test_colour_blobs_survive_shading() -> None:
    img = canvas()
    square(img, 80, 120, 12, (216, 26, 26))  # red, lit
    square(img, 160, 120, 12, (120, 14, 14))  # red in shade: same colour word
    square(img, 240, 120, 12, (115, 66, 26))  # brown, not a dark orange
    view = analyse_array(img)
    assert len(view.of("red")) == 2
    assert len(view.of("brown")) == 1 and not view.of("orange")
    cx, cy = view.largest("brown").centroid  # type: ignore[union-attr]
    assert abs(cx - 239.5) < 1 and abs(cy - 119.5) < 1
    assert view.steep and view.sky == 0.0


def test_labels_per_distinct_colour_equal_labels_per_pixel() -> None:
    # _classify labels each distinct colour once; every pixel must get what it would alone.
    img = canvas()
    square(img, 80, 80, 20, (200, 40, 40))
    square(img, 200, 120, 30, (120, 70, 30))  # brown, told from orange by brightness
    img[200:, :] = np.random.default_rng(0).integers(0, 256, size=(40, 320, 3), dtype=np.uint8)
    for picture in (img, img[:1, :5], img[None, 0]):
        idx, ok = _classify(picture)
        want_idx, want_ok = _classify_pixels(picture)
        assert idx.dtype == want_idx.dtype and np.array_equal(idx, want_idx)
        assert ok.dtype == want_ok.dtype and np.array_equal(ok, want_ok)


def test_distinct_colours_are_np_uniques() -> None:
    # _distinct finds the colours from a sample and adds those the sample missed.
    rng = np.random.default_rng(1)
    few = rng.integers(0, 5, size=76800) * 70001
    rare = few.copy()
    rare[[3, 40001, 76799]] = [9, 1 << 23, 123456]  # off the sample's stride
    for codes in (few, rare, rng.integers(0, 1 << 24, size=1000), np.array([7]), few[:63]):
        colours, where = _distinct(codes)
        want_colours, want_where = np.unique(codes, return_inverse=True)
        assert np.array_equal(colours, want_colours) and np.array_equal(where, want_where)


def test_geometry_solvers_on_drawn_overhead_views() -> None:
    q = "Are the red cube, the blue cube and the green cube arranged in a straight line on the table?"
    task = read_task(q, {"options": ["yes", "no"], "answer_kind": "yes_no"})
    lined, bent = canvas(), canvas()
    for img, middle_y in ((lined, 120), (bent, 80)):
        square(img, 60, 120, 10, (220, 30, 30))
        square(img, 160, middle_y, 10, (30, 60, 230))
        square(img, 260, 120, 10, (25, 165, 40))
    assert solve(task, [analyse_array(lined)]).answer == "yes"
    assert solve(task, [analyse_array(bent)]).answer == "no"

    touch = read_task("Are the red cube and the blue cube touching each other?", {"options": ["yes", "no"]})
    apart, together = canvas(), canvas()
    square(apart, 100, 120, 15, (220, 30, 30))
    square(apart, 140, 120, 15, (30, 60, 230))  # a 10-pixel gap of wood between them
    square(together, 100, 120, 15, (220, 30, 30))
    square(together, 130, 120, 15, (30, 60, 230))
    assert solve(touch, [analyse_array(apart)]).answer == "no"
    assert solve(touch, [analyse_array(together)]).answer == "yes"

    bigger = read_task(
        "Which is larger: the red cube or the blue cube?", {"options": ["red_cube", "blue_cube"]}
    )
    img = canvas()
    square(img, 100, 120, 10, (220, 30, 30))
    square(img, 220, 120, 14, (30, 60, 230))
    assert solve(bigger, [analyse_array(img)]).answer == "blue_cube"


def test_a_row_of_touching_objects_seen_from_above_counts_as_its_members() -> None:
    task = read_task("How many red cubes are on the table?", {"answer_kind": "integer"})
    img = canvas()
    for k in range(3):  # three cubes touching in a row: one red blob 60 x 20 pixels
        square(img, 100 + 20 * k, 80, 10, (220, 30, 30))
    square(img, 220, 170, 10, (220, 30, 30))  # and one standing alone
    square(img, 60, 190, 10, (30, 60, 230))  # a blue one does not count
    view = analyse_array(img)
    assert len(view.of("red")) == 2
    assert solve(task, [view]).answer == "4"


def test_physical_tests_are_read_from_reported_outcomes() -> None:
    fit = read_task("Does the green cylinder fit inside the yellow bin?", {"options": ["yes", "no"]})
    assert (
        solve(fit, [], text="put_inside: ok; green_cylinder is inside yellow_bin; inside=True").answer
        == "yes"
    )
    assert solve(fit, [], text="put_inside: failed; it rests on the rim; inside=False").answer == "no"
    stay = read_task(
        "If the red cube is set down on the slope of the brown ramp, will it stay still without sliding?",
        {"options": ["yes", "no"]},
    )
    assert (
        solve(stay, [], text="put_on_slope: ok; red_cube slid 12 cm down the ramp; slid=True").answer == "no"
    )
    assert solve(stay, [], text="put_on_slope: ok; red_cube stayed; slid=False").answer == "yes"


def test_the_three_object_base_form_is_solved_from_one_try_of_each_pair() -> None:
    # The tabletop's wording of ESI-Bench's three-object Action Order Inference question.
    text = (
        "There are two crates, the red crate above B and the blue crate below B; one green box (B); "
        "and two blocks, the pink block above B and the brown block below B, as seen in the first "
        "view (above: farther away). Which crate should B be placed on top of as its base, and which "
        "block should go on top of B? Answer with two sides, the crate's first: e.g. 'above, below'."
    )
    options = ["above, above", "above, below", "below, above", "below, below"]
    task = read_task(text, {"options": options})
    assert task.kind == "base_top"
    assert solve(task, [], text="").confidence == 0.0  # nothing tried yet: a guess
    # B sank into the red crate (so the blue one carries it); the pink block stayed on B.
    tried = (
        "put_on: failed; green_box did not stay on top of red_crate; it ended below its rim\n"
        "put_back: ok; green_box is back where it started\n"
        "put_on: ok; pink_block rests on green_box after settling"
    )
    assert solve(task, [], text=tried).answer == "below, above"


# --------------------------------------------------------------------------------------------
# the provider


def test_registry_alias_and_usage() -> None:
    model = get_model("reference")
    assert isinstance(model, ReferenceModel) and model.name == "reference/tabletop"
    assert get_model("reference/tabletop").name == "reference/tabletop"
    img = Image.from_array(canvas())
    msgs = [ChatMessage.user("What colour is the square?", img)]
    # 320x240 is 12 x 9 patches of 28 pixels, plus about a token per four characters.
    assert estimate_input_tokens(msgs) == 108 + 7
    completion = asyncio.run(model.generate(msgs, GenerateConfig(stage="passive")))
    assert completion.usage.images_sent == 1 and completion.usage.input_tokens == 115
    assert completion.usage.output_tokens and completion.latency_s >= 0.0


def test_never_imports_the_simulator_side() -> None:
    """The policy's modules import nothing from eviseek.envs (where ground truth and masks live)."""
    package = Path(__import__("eviseek.models.reference", fromlist=["x"]).__file__).parent
    for path in package.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith(("eviseek.envs", "pybullet")), f"{path.name} imports {name}"


# --------------------------------------------------------------------------------------------
# full episodes with privileged access armed


class PrivilegedTrap:
    """Makes every privileged simulator accessor raise while a model call is being answered."""

    def __init__(self) -> None:
        self.inside_model = threading.Event()
        self.hits: list[str] = []

    def guard(self, owner: type, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
        original = getattr(owner, name)
        trap = self

        if isinstance(original, property):

            def getter(obj: Any) -> Any:
                trap.check(f"{owner.__name__}.{name}")
                return original.fget(obj)  # type: ignore[misc]

            monkeypatch.setattr(owner, name, property(getter))
            return

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            trap.check(f"{owner.__name__}.{name}")
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapper)

    def check(self, what: str) -> None:
        if self.inside_model.is_set():
            self.hits.append(what)
            raise AssertionError(f"the reference model reached privileged state: {what}")


@pytest.fixture(scope="module")
def dev_questions() -> list[Any]:
    from eviseek.cli.demo import interleave
    from eviseek.envs.tabletop import load_split

    qs = interleave(load_split("dev"))
    seen: set[str] = set()
    one_each = []
    for q in qs:
        if q.subcategory not in seen:
            seen.add(q.subcategory)
            one_each.append(q)
    return one_each


@pytest.fixture(scope="module")
def episodes(dev_questions: list[Any]) -> dict[str, list[tuple[Any, Any, float]]]:
    """(question, trajectory, support) per agent, run with privileged access armed."""
    from eviseek.agents import make_agent
    from eviseek.envs.base import as_async
    from eviseek.envs.tabletop import TabletopEnv, TabletopOracle
    from eviseek.envs.tabletop.sim import TabletopSim
    from eviseek.envs.tabletop.support import SupportGrader

    mp = pytest.MonkeyPatch()
    trap = PrivilegedTrap()
    for name in ("pose_of", "poses", "aabb", "distance", "contacts", "render", "liquid_level"):
        trap.guard(TabletopSim, name, mp)
    for name in ("ground_truth", "evidence", "world"):
        trap.guard(TabletopOracle, name, mp)
    for name in ("visual_support", "support_report", "visible_fraction", "visibility", "segmentation"):
        trap.guard(TabletopOracle, name, mp)
    trap.guard(SupportGrader, "grade", mp)
    trap.guard(TabletopEnv, "oracle", mp)

    model = ReferenceModel()
    original_reply = ReferenceModel.reply

    def armed_reply(self: ReferenceModel, messages: Any, config: Any) -> Any:
        trap.inside_model.set()
        try:
            return original_reply(self, messages, config)
        finally:
            trap.inside_model.clear()

    mp.setattr(ReferenceModel, "reply", armed_reply)
    env = TabletopEnv()
    out: dict[str, list[tuple[Any, Any, float]]] = {}

    async def run_all() -> None:
        aenv = as_async(env)
        for agent_name in ("passive", "single-model", "eviseek"):
            agent = make_agent(agent_name)
            rows = []
            for q in dev_questions:
                traj = await agent.run(aenv, q, model, seed=0)
                # Grading after the episode is the harness's job, outside any model call.
                rows.append((q, traj, env.visual_support(traj.answer_frame_ids)))
            out[agent_name] = rows
        # The issue-17 switches (seek keep field, curator, LOOK_UP, guarded context) on a few
        # subcategories, under the same trap.
        variant = make_agent("eviseek:retention=split+guarded_answer+look_up")
        out["eviseek-split"] = [
            (q, traj, env.visual_support(traj.answer_frame_ids))
            for q in [q for q in dev_questions if q.family == "Perceptual Grounding"][:4]
            for traj in [await variant.run(aenv, q, model, seed=0)]
        ]

    try:
        asyncio.run(run_all())
    finally:
        env.close()
        mp.undo()
    assert not trap.hits
    return out


def test_episodes_never_touch_privileged_state(episodes: dict[str, list[tuple[Any, Any, float]]]) -> None:
    for agent, rows in episodes.items():
        for q, traj, _ in rows:
            assert traj.result is not None and traj.result.error is None, (agent, q.id)
            assert traj.calls, (agent, q.id)


def test_every_reply_fits_its_stage_schema(episodes: dict[str, list[tuple[Any, Any, float]]]) -> None:
    from eviseek.agents.parsing import parse_reply
    from eviseek.agents.replies import (
        AnswerReply,
        CoverageReply,
        CurateReply,
        DemandsReply,
        ForcedChoiceReply,
        KeepReply,
        PlanReply,
        SeekReply,
        SingleStepReply,
        TrackReply,
        TriageReply,
    )

    schemas = {
        "passive": AnswerReply,
        "answer": AnswerReply,
        "forced_choice": ForcedChoiceReply,
        "single_step": SingleStepReply,
        "demands": DemandsReply,
        "plan": PlanReply,
        "seek": SeekReply,
        "curate": CurateReply,
        "coverage": CoverageReply,
        "triage": TriageReply,
    }
    stages: set[str] = set()
    for rows in episodes.values():
        for _, traj, _ in rows:
            assert not [e for e in traj.events if e.kind == "parse_failure"]
            for call in traj.calls:
                stages.add(call.stage or "")
                if call.stage == "keep":
                    reply = TrackReply if call.config.metadata.get("purpose") == "track" else KeepReply
                else:
                    reply = schemas[call.stage or ""]
                assert parse_reply(call.output, reply).ok, (call.stage, call.output)
                assert call.usage.input_tokens and call.usage.output_tokens
    assert {"passive", "single_step", "demands", "plan", "seek", "keep", "curate", "answer"} <= stages
    split_seeks = [c for _, t, _ in episodes["eviseek-split"] for c in t.calls if c.stage == "seek"]
    assert any('"keep": true' in c.output for c in split_seeks)


def _chance(q: Any) -> float:
    if q.contract.kind == "integer":
        return 1 / 3  # a soft count score for a guess within the usual range
    if q.contract.kind == "sequence":
        return 1 / 6
    return 1 / max(1, len(q.contract.options or [1, 2]))


def test_beats_chance_with_informative_views(episodes: dict[str, list[tuple[Any, Any, float]]]) -> None:
    """The active agents gather informative views; from them the policy clearly beats chance."""
    from eviseek.answers import score_answer

    for agent in ("single-model", "eviseek"):
        rows = episodes[agent]
        scores = [score_answer(q, traj.result.answer).score for q, traj, _ in rows]
        chance = sum(_chance(q) for q, _, _ in rows) / len(rows)
        accuracy = sum(scores) / len(scores)
        assert accuracy >= chance + 0.3, (agent, accuracy, chance)
        support = sum(s for _, _, s in rows) / len(rows)
        assert support >= 0.6, (agent, support)
    passive_support = sum(s for _, _, s in episodes["passive"]) / len(episodes["passive"])
    eviseek_support = sum(s for _, _, s in episodes["eviseek"]) / len(episodes["eviseek"])
    assert eviseek_support > passive_support


def test_the_trap_fires_when_armed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The privileged-access check above can fail: an armed accessor raises."""

    class Sim:
        def poses(self) -> dict[str, Any]:
            return {"red_cube": ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))}

    trap = PrivilegedTrap()
    trap.guard(Sim, "poses", monkeypatch)
    assert Sim().poses()  # outside a model call: allowed
    trap.inside_model.set()
    with pytest.raises(AssertionError, match=r"privileged state: Sim\.poses"):
        Sim().poses()


def test_plain_question_without_a_schema_gets_plain_text() -> None:
    """``eviseek models check --model reference`` asks for a colour in plain text."""
    img = canvas()
    square(img, 160, 120, 30, (30, 60, 230))
    square(img, 30, 30, 8, (220, 30, 30))
    msgs = [ChatMessage.user(Image.from_array(img), "What colour is the square in the middle?")]
    completion = asyncio.run(ReferenceModel().generate(msgs, GenerateConfig(stage="check")))
    assert completion.text == "blue"

"""Liquid Volume's capacity form: ``fill`` is an action wherever actions are listed, it is refused
where it does not belong, and the water it adds is what a frame shows.

Answers are derived here from the stored scene spec alone (inner volume of each container from
its built size and wall), not from the family's code.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import numpy as np
import pytest

from eviseek.envs.tabletop import TabletopEnv, generate_questions
from eviseek.envs.tabletop.gymnasium_env import TabletopGymEnv
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.types import Action, Question


@cache
def liquid_questions() -> tuple[Question, ...]:
    return tuple(generate_questions(6, 21, subcategories=["liquid_volume"], render_images=False))


def capacity_questions() -> list[Question]:
    return [q for q in liquid_questions() if q.metadata["form"] == "capacity"]


def inner_ml(scene: SceneSpec, name: str) -> float:
    o = scene.object(name)
    return (o.size[0] - 2 * o.wall) * (o.size[1] - 2 * o.wall) * (o.size[2] - o.wall) * 1e6


def test_the_forms_take_turns_and_the_capacity_answers_are_balanced() -> None:
    forms = [(q.metadata["form"], q.metadata.get("answer_by", "name")) for q in liquid_questions()]
    assert forms == [
        ("capacity", "side"),
        ("overflow", "name"),
        ("capacity", "side"),
        ("overflow", "name"),
        ("capacity", "name"),
        ("capacity", "name"),
    ]
    caps = capacity_questions()
    positions = Counter(q.contract.options.index(q.ground_truth) for q in caps)  # type: ignore[arg-type, union-attr]
    assert positions == {0: 2, 1: 2}
    for q in caps:
        s = SceneSpec.model_validate(q.scene)
        a, b = q.metadata["containers"]
        larger = a if inner_ml(s, a) > inner_ml(s, b) else b
        if q.metadata.get("answer_by") == "side":  # ESI-Bench's form: left and right, as the text says
            assert q.contract.options == ["left", "right"]
            assert q.ground_truth == ("left" if larger == a else "right")
            la, lb = (a.replace("_", " "), b.replace("_", " "))
            assert f"The {la} is on the left and the {lb} is on the right" in q.text
        else:
            assert q.ground_truth == larger
        assert max(inner_ml(s, a), inner_ml(s, b)) / min(inner_ml(s, a), inner_ml(s, b)) >= 1.14
        assert all(s.object(n).state.get("liquid_ml", 0.0) == 0.0 for n in (a, b))  # both start empty
        assert {s.object(a).category, s.object(b).category} == {"cup", "bowl"}
        assert q.text.endswith("?") and "fill" in q.guidance


def test_fill_then_pour_decides_and_its_frame_is_the_evidence() -> None:
    env = TabletopEnv(width=96, height=72)
    try:
        for q in capacity_questions():
            a, b = q.metadata["containers"]
            env.reset(options={"question": q})
            names = {s.name for s in env.legal_actions()}
            assert {"fill", "pour"} <= names
            # Pouring an empty container is refused; so is filling a full one.
            empty = env.step(Action(name="pour", args={"object": a, "target": b}))
            assert not empty.feedback.success and "no water" in empty.feedback.reason
            sim = env.oracle.world.sim
            filled = env.step(Action(name="fill", args={"object": a}))
            assert filled.feedback.success and "ml" not in filled.feedback.summary()  # no volume given away
            assert sim.capacity_ml(a) == pytest.approx(
                inner_ml(SceneSpec.model_validate(q.scene), a), rel=1e-3
            )
            again = env.step(Action(name="fill", args={"object": a}))
            assert not again.feedback.success and "already full" in again.feedback.reason
            assert not env.step(Action(name="pour", args={"object": a, "target": a})).feedback.success
            res = env.step(Action(name="pour", args={"object": a, "target": b}))
            assert res.feedback.success
            answers = ["left", "right"] if q.metadata.get("answer_by") == "side" else [a, b]
            assert answers[0 if res.feedback.state["overflowed"] else 1] == q.ground_truth
            assert env.visual_support([0, filled.observation.frame_id]) < 1.0  # filling alone decides nothing
            assert env.visual_support([0, res.observation.frame_id]) == 1.0
    finally:
        env.close()


def test_fill_is_refused_in_the_overflow_form_and_by_name_elsewhere() -> None:
    env = TabletopEnv(width=64, height=48)
    try:
        q = next(q for q in liquid_questions() if q.metadata["form"] == "overflow")
        env.reset(options={"question": q})
        assert "fill" not in {s.name for s in env.legal_actions()}
        fb = env.step(Action(name="fill", args={"object": q.metadata["target"]})).feedback
        assert not fb.success and "unknown action 'fill'" in fb.reason and "pour" in fb.reason
        cap = capacity_questions()[0]
        env.reset(options={"question": cap})
        fb = env.step(Action(name="fill", args={"object": "red_nothing"})).feedback
        assert not fb.success and cap.metadata["containers"][0] in fb.reason
    finally:
        env.close()


def test_the_water_a_fill_adds_is_drawn_in_the_container() -> None:
    """Pixels: after ``fill`` the frame shows the water body inside the filled container, seen from
    above, where the empty container showed none."""
    env = TabletopEnv(width=160, height=120)
    try:
        q = capacity_questions()[0]
        a = q.metadata["containers"][0]
        env.reset(options={"question": q})
        for _ in range(3):
            env.step(Action(name="move_up"))
        for _ in range(4):
            last = env.step(Action(name="turn_down"))
        sim = env.oracle.world.sim
        assert a not in sim.liquid_uid
        filled = env.step(Action(name="fill", args={"object": a}))
        seg = env.oracle.segmentation(filled.observation.frame_id)
        water_px = int(np.count_nonzero(seg == sim.liquid_uid[a]))
        assert water_px >= 20, water_px
        changed = np.any(filled.observation.image.array() != last.observation.image.array(), axis=2)
        assert int(changed.sum()) >= water_px // 2
    finally:
        env.close()


def test_fill_is_a_slot_of_the_gymnasium_action_space() -> None:
    env = TabletopGymEnv(questions=capacity_questions()[:1], width=64, height=48)
    try:
        _, info = env.reset(seed=0)
        names = info["action_names"]
        slots = [i for i, n in enumerate(names) if n and n.startswith("fill(")]
        assert len(slots) == 2 and all(info["action_mask"][i] for i in slots)
    finally:
        env.close()


def test_the_env_checker_and_the_intent_library_take_fill() -> None:
    from eviseek.agents.eviseek.intents import IntentLibrary
    from eviseek.envs.checker import check_env

    q = capacity_questions()[0]
    a = q.metadata["containers"][0]
    env = TabletopEnv(width=64, height=48)
    try:
        check_env(env, q)  # steps every manipulation primitive, fill among them
        env.reset(options={"question": q})
        library = IntentLibrary(env.legal_actions())
        assert "fill" in library.names()
        compiled, why = library.compile("fill", {"object": a}, remaining=5)
        assert compiled is not None and compiled.kind == "manipulation", why
        assert [x.text() for x in compiled.actions] == [f"fill(object={a})"]
    finally:
        env.close()

"""Questions test what they say: no subcategory is answerable from its text alone, no answer or
option position dominates, names match the shapes built, colour words match the rendered pixels,
and "partly hidden" targets are partly visible in the first view.

One large generated set (every subcategory, including any added later) is checked with exact
binomial tests. Each check derives its facts on its own: from PyBullet's built shapes, from fresh
renders of the stored scene, and from HSV readings of the pixels, not from the generator's code.
"""

from __future__ import annotations

import asyncio
import colorsys

import numpy as np
import pytest

from eviseek.agents import make_agent
from eviseek.envs import as_async
from eviseek.envs.tabletop import TabletopEnv, honesty
from eviseek.envs.tabletop.families import all_families
from eviseek.envs.tabletop.generate import QuestionBuilder
from eviseek.envs.tabletop.honesty import ALPHA, above_chance, correct
from eviseek.envs.tabletop.scene import LightSpec, SceneSpec
from eviseek.envs.tabletop.sim import TabletopSim
from eviseek.models.reference import ReferenceModel
from eviseek.types import Question

pytestmark = pytest.mark.slow

SEED = 4242
N_PER_SUBCATEGORY = 16
N_SLOW = 8
"""Fewer questions for subcategories whose ground truth simulates many trials (about 1 s each)."""
SLOW = {"stacking_and_stability"}


BROKEN_DRAWS: list[str] = []
"""Questions whose generator raised (skipped here, listed in the fixture's report)."""


@pytest.fixture(scope="module")
def questions() -> dict[str, list[Question]]:
    builder = QuestionBuilder()
    out: dict[str, list[Question]] = {}
    try:
        for fam in all_families():
            want = N_SLOW if fam.slug in SLOW else N_PER_SUBCATEGORY
            qs: list[Question] = []
            index = 0
            while len(qs) < want and index < 2 * want:
                try:
                    qs.append(builder.build(fam, SEED, index, render_images=False))
                except RuntimeError as exc:
                    # mirror_spatial_relations' generator gives up on some seeds (a bug of that
                    # family on main, reported); the other checks go on with the next index.
                    BROKEN_DRAWS.append(f"{fam.slug}[{index}]: {exc}")
                index += 1
            out[fam.subcategory] = qs
    finally:
        builder.close()
    return out


def test_the_text_alone_does_not_answer_any_subcategory(questions: dict[str, list[Question]]) -> None:
    failures = [f for sub, qs in questions.items() for f in honesty.text_failures(sub, qs)]
    assert not failures, failures


def test_the_blind_agent_is_not_above_chance(questions: dict[str, list[Question]]) -> None:
    env = TabletopEnv(width=64, height=48, privileged=False)
    model = ReferenceModel()
    agent = make_agent("blind")

    async def answer(q: Question) -> str | None:
        traj = await agent.run(as_async(env), q, model)
        return traj.result.answer if traj.result is not None else None

    failures = []
    try:
        for sub, qs in questions.items():
            hits = sum(correct(q, asyncio.run(answer(q))) for q in qs)
            pval = above_chance(hits, qs)
            if pval < ALPHA:
                failures.append(f"{sub}: blind right {hits}/{len(qs)} (p={pval:.4f})")
    finally:
        env.close()
    assert not failures, failures


def test_no_answer_value_or_option_position_dominates(questions: dict[str, list[Question]]) -> None:
    failures = [f for sub, qs in questions.items() for f in honesty.balance_failures(sub, qs)]
    assert not failures, failures


# -- names, colours and wording against the built and rendered scene ---------------------------

SHAPE_NOUNS = {"cube": "GEOM_BOX", "ball": "GEOM_SPHERE", "cylinder": "GEOM_CYLINDER"}
CUBE_TOLERANCE = 1.1
"""A cube's longest side is at most 10% longer than its shortest (the issue's rule)."""


def built(q: Question) -> tuple[SceneSpec, TabletopSim]:
    spec = SceneSpec.from_question(q.scene)
    return spec, TabletopSim(spec, width=320, height=240)


def test_names_match_the_shapes_built(questions: dict[str, list[Question]]) -> None:
    failures = []
    for qs in questions.values():
        for q in qs[:8]:
            spec, sim = built(q)
            try:
                p = sim.p
                for obj in spec.objects:
                    nouns = [n for n in SHAPE_NOUNS if n in obj.name.split("_")]
                    if not nouns:
                        continue
                    data = p.getVisualShapeData(sim.uid[obj.name], physicsClientId=sim.client)[0]
                    geom, dims = data[2], data[3]
                    if geom != getattr(p, SHAPE_NOUNS[nouns[0]]):
                        failures.append(f"{q.id}: {obj.name} is built as geometry {geom}")
                    elif nouns[0] == "cube":
                        sides = [2 * d for d in dims[:3]] if max(dims[:3]) < 0.2 else list(dims[:3])
                        if max(sides) > CUBE_TOLERANCE * min(sides):
                            mm = "x".join(f"{s * 1000:.0f}" for s in sides)
                            failures.append(f"{q.id}: {obj.name} is {mm} mm, not a cube")
            finally:
                sim.close()
    assert not failures, failures


HUES = {
    "red": (345, 15),
    "orange": (15, 40),
    "yellow": (40, 70),
    "green": (70, 165),
    "cyan": (165, 200),
    "blue": (200, 255),
    "purple": (255, 300),
    "pink": (300, 345),
}
"""Hue ranges (degrees) of the chromatic colour words (ours, from the usual colour wheel)."""


BROWN_MAX_V = 0.52


def colour_word_fits(word: str, rgb: np.ndarray) -> bool:
    """Whether a median pixel colour reads as ``word`` (HSV thresholds of our own)."""
    h, s, v = colorsys.rgb_to_hsv(*(rgb / 255.0))
    hue = h * 360
    if word in ("black", "dark_gray", "light_gray", "white", "gray"):
        if s > 0.2:
            return False
        return {
            "black": v < 0.2,
            "dark_gray": 0.2 <= v < 0.45,
            "light_gray": 0.45 <= v < 0.85,
            "gray": 0.3 <= v < 0.7,
            "white": v >= 0.85,
        }[word]
    if s < 0.3:
        return False
    # Brown is dark orange. A face renders its paint times 0.55-1.1 (ambient plus diffuse light),
    # so brown paint (brightest channel 0.45) stays under 0.5 and orange paint (0.98) over 0.54.
    if word == "brown":
        return 15 <= hue < 45 and v < BROWN_MAX_V
    if word == "orange" and v < BROWN_MAX_V:
        return False
    lo, hi = HUES[word]
    return lo <= hue < hi if lo < hi else hue >= lo or hue < hi


def test_colour_words_match_the_rendered_pixels(questions: dict[str, list[Question]]) -> None:
    failures, checked = [], 0
    for qs in questions.values():
        for q in qs[:4]:
            spec, sim = built(q)
            try:
                if spec.light != LightSpec():
                    continue  # coloured or dimmed light is the point of some questions
                for change in spec.changes:
                    sim.apply_change(change)
                frame = sim.render(spec.camera)
                for obj in spec.objects:
                    if obj.material != "matte" or obj.category in ("wall", "mat", "table"):
                        continue
                    mask = frame.segmentation == sim.uid[obj.name]
                    if mask.sum() < 60:
                        continue
                    checked += 1
                    med = np.median(frame.rgb[mask].astype(float), axis=0)
                    if not colour_word_fits(obj.color, med):
                        failures.append(f"{q.id}: {obj.name} renders as RGB {med.astype(int).tolist()}")
            finally:
                sim.close()
    assert checked > 50
    assert not failures, failures


def test_partly_hidden_targets_are_partly_visible_in_the_first_view(
    questions: dict[str, list[Question]],
) -> None:
    failures = []
    for q in questions["Partial Occlusion"]:
        spec, sim = built(q)
        target = q.metadata["target"]
        try:
            seen = int((sim.render(spec.camera).segmentation == sim.uid[target]).sum())
        finally:
            sim.close()
        alone_spec = spec.model_copy(update={"objects": [o for o in spec.objects if o.name == target]})
        alone_sim = TabletopSim(alone_spec, width=320, height=240)
        try:
            alone = int((alone_sim.render(spec.camera).segmentation == alone_sim.uid[target]).sum())
        finally:
            alone_sim.close()
        if not (alone > 0 and 0 < seen < 0.6 * alone):
            failures.append(f"{q.id}: {seen} of {alone} target pixels visible in the first view")
    assert not failures, failures


# -- the first view's image statistics ----------------------------------------------------------


def test_first_view_image_statistics_do_not_answer_exploring_subcategories(
    questions: dict[str, list[Question]],
) -> None:
    """A leave-one-out learner on simple statistics of the first view (target pixel area, position,
    lowest row, colour share) stays at chance on every subcategory whose answer needs exploring."""
    failures, checked = [], []
    for sub, qs in questions.items():
        if sub in honesty.FIRST_VIEW_ANSWERABLE or len(qs) < 4:
            continue
        line, bad = honesty.first_view_failure(sub, qs)
        checked.append(line)
        if bad:
            failures.append(bad)
    assert len(checked) >= 15, checked
    assert not failures, failures

"""The ten subcategories added for ESI-Bench coverage (issue 12): ground truth against an independent
derivation from the stored scene spec, balanced answers, the env checker, and first-view wording
and visibility checked on rendered pixels."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from functools import cache

import numpy as np
import pytest

from eviseek.answers import score_answer
from eviseek.envs.checker import check_env
from eviseek.envs.tabletop import SceneSpec, TabletopEnv, all_families, generate_questions
from eviseek.envs.tabletop import camera as cam
from eviseek.types import Question

NEW = [
    "material_transparency",
    "deformable",
    "reflection_authoring",
    "mirror_spatial_relations",
    "correspondence",
    "spatial_segmentation",
    "category_ambiguity",
    "structural_enclosure",
    "illumination_variability",
    "agent_observation",
]
N = 12


@cache
def questions(slug: str) -> tuple[Question, ...]:
    return tuple(generate_questions(N, 21, subcategories=[slug], render_images=False))


def _yaw(quat: tuple[float, ...]) -> float:
    return 2 * math.atan2(quat[2], quat[3])


def _mirror_face(s: SceneSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """Centre, normal and sideways axis of the mirror's face, and its reflecting half sizes."""
    m = s.object("mirror")
    yaw = _yaw(m.orientation)
    normal = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    side = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
    centre = np.asarray(m.position) + normal * m.size[0] / 2
    frame = 0.012
    return centre, normal, side, m.size[1] / 2 - frame, m.size[2] / 2 - frame


def independent_truth(q: Question) -> str:
    s = SceneSpec.model_validate(q.scene)
    m = q.metadata
    slug = m["slug"]
    eye = np.array([s.camera.x, s.camera.y, s.camera.z])
    if slug in ("structural_enclosure", "spatial_segmentation", "illumination_variability"):
        return str(sum(o.category == m["category"] and o.color == m["color"] for o in s.objects))
    if slug == "category_ambiguity":
        return str(
            sum(
                o.shape == "box" and o.color == m["color"] and max(o.size) <= 1.1 * min(o.size)
                for o in s.objects
            )
        )
    if slug == "deformable":
        return s.object(m["target"]).category
    if slug == "material_transparency":
        jar, obj = s.object(m["jar"]), s.object(m["target"])
        yaw = _yaw(jar.orientation)
        d = np.asarray(obj.position[:2]) - np.asarray(jar.position[:2])
        local = np.array([d @ [math.cos(yaw), math.sin(yaw)], d @ [-math.sin(yaw), math.cos(yaw)]])
        inner = np.asarray(jar.size[:2]) / 2 - jar.wall
        below_rim = obj.position[2] - obj.size[2] / 2 < jar.size[2]
        return "yes" if bool(np.all(np.abs(local) < inner)) and below_rim else "no"
    if slug == "reflection_authoring":
        # Seen through the mirror exactly when the target stands behind the camera.
        fwd, _, _ = cam.view_vectors(s.camera)
        return "yes" if (np.asarray(s.object(m["target"]).position) - eye) @ fwd < 0 else "no"
    if slug == "mirror_spatial_relations":
        da, db = (float(np.linalg.norm(np.asarray(s.object(m[k]).position) - eye)) for k in "AB")
        return "A" if da < db else "B"
    if slug == "correspondence":
        centre, normal, side, half_w, half_h = _mirror_face(s)
        shown = []
        for name in m["objects"]:
            p = np.asarray(s.object(name).position)
            image = p - 2 * ((p - centre) @ normal) * normal  # the mirror image of the object
            t = ((centre - eye) @ normal) / ((image - eye) @ normal)
            hit = eye + t * (image - eye) - centre
            shown.append(abs(hit @ side) <= half_w and abs(hit[2]) <= half_h)
        assert sum(shown) == 1, "exactly one object shows in the mirror"
        us = [
            float(cam.project(np.asarray(s.object(n).position), s.camera, s.fov, 320, 240)[0][0][0])
            for n in m["objects"]
        ]
        rank = sorted(range(3), key=lambda i: us[i])
        return ["left", "middle", "right"][rank.index(shown.index(True))]
    if slug == "agent_observation":
        robot = np.asarray(s.object(m["robot"]).position[:2])
        path = [np.asarray(p, dtype=float) for p in m["path"]] + [robot]

        def to_path(p: np.ndarray) -> float:
            # Distance to each leg, sampled finely along it (a different method from the family's).
            pts = np.concatenate([np.linspace(a, b, 400) for a, b in itertools.pairwise(path)])
            return float(np.min(np.linalg.norm(pts - p, axis=1)))

        return str(
            sum(
                o.category == m["category"]
                and o.color == m["color"]
                and to_path(np.asarray(o.position[:2])) <= 0.1
                for o in s.objects
            )
        )
    raise AssertionError(f"no independent check for {slug}")


def test_every_esi_bench_subcategory_but_the_house_ones_is_generated() -> None:
    subs = {(f.family, f.subcategory) for f in all_families()}
    assert len(subs) == 26
    for expected in [
        ("Perceptual Grounding", "Material Transparency"),
        ("Physical Structure", "Deformable"),
        ("Specular Reflection", "Reflection Authoring"),
        ("Specular Reflection", "Spatial Relations"),
        ("Specular Reflection", "Correspondence"),
        ("Enumerative Perception", "Spatial Segmentation"),
        ("Enumerative Perception", "Category Ambiguity"),
        ("Enumerative Perception", "Structural Enclosure"),
        ("Enumerative Perception", "Illumination Variability"),
        ("Temporal Understanding", "Agent Observation"),
    ]:
        assert expected in subs


@pytest.mark.slow
@pytest.mark.parametrize("slug", NEW)
def test_ground_truth_matches_an_independent_derivation(slug: str) -> None:
    for q in questions(slug):
        assert q.ground_truth == independent_truth(q), (q.id, q.text)
        assert score_answer(q, str(q.ground_truth)).correct
        if q.contract.options:
            assert q.ground_truth in q.contract.options
            wrong = next(o for o in q.contract.options if o != q.ground_truth)
            assert not score_answer(q, wrong).correct
        assert "?" in q.text
        assert q.guidance
        assert q.metadata["initial_support"] < 1.0, q.id


@pytest.mark.slow
@pytest.mark.parametrize(
    "slug",
    [
        "material_transparency",
        "reflection_authoring",
        "mirror_spatial_relations",
        "correspondence",
        "deformable",
        "agent_observation",
    ],
)
def test_answers_are_balanced_and_no_option_position_dominates(slug: str) -> None:
    qs = questions(slug)
    answers = Counter(str(q.ground_truth) for q in qs)
    k = len(qs[0].contract.options)
    # With 12 questions no answer may take more than 9 (chance of that under a fair design < 1%
    # for two options, far less for more).
    assert max(answers.values()) <= 9, answers
    assert len(answers) >= min(k, 3), answers
    positions = Counter(q.contract.options.index(str(q.ground_truth)) for q in qs)
    assert max(positions.values()) <= 9, positions


def test_counts_stay_in_a_countable_range() -> None:
    for slug in (
        "spatial_segmentation",
        "category_ambiguity",
        "structural_enclosure",
        "illumination_variability",
    ):
        counts = [int(q.ground_truth) for q in questions(slug)[:6]]  # type: ignore[arg-type]
        assert min(counts) >= 1 and max(counts) <= 9, (slug, counts)


@pytest.mark.slow
@pytest.mark.parametrize("slug", NEW)
def test_new_families_pass_the_env_checker_and_rebuild_their_first_view(slug: str) -> None:
    (q,) = generate_questions(1, 22, subcategories=[slug])
    env = TabletopEnv()
    try:
        check_env(env, q)
        obs, _ = env.reset(options={"question": q})
        assert q.initial_image is not None and (obs.image.array() == q.initial_image.array()).all()
        refs = {"illumination_variability": 1, "agent_observation": 3}.get(slug, 0)
        assert len(q.reference_images) == refs
        assert {s.kind for s in env.legal_actions()} <= {"camera", "control"}
    finally:
        env.close()


def test_first_views_show_what_the_wording_says() -> None:
    """The question's claims about the first view hold on the rendered pixels."""
    from eviseek.envs.tabletop.sim import TabletopSim

    for slug in (
        "reflection_authoring",
        "mirror_spatial_relations",
        "deformable",
        "illumination_variability",
    ):
        (q,) = generate_questions(1, 23, subcategories=[slug], render_images=False)
        s = SceneSpec.model_validate(q.scene)
        sim = TabletopSim(s)
        try:
            frame = sim.render(s.camera)
            reflected = (
                frame.reflection if frame.reflection is not None else np.full_like(frame.segmentation, -1)
            )

            def direct(name: str, seg: np.ndarray = frame.segmentation, uid: dict = sim.uid) -> int:
                return int(np.count_nonzero(seg == uid[name]))

            def mirrored(name: str, seg: np.ndarray = reflected, uid: dict = sim.uid) -> int:
                return int(np.count_nonzero(seg == uid[name]))

            m = q.metadata
            if slug == "reflection_authoring":
                # "In this view you can see a ...": one copy, directly or in the mirror, not both.
                t = m["target"]
                assert (direct(t) > 30) != (mirrored(t) > 30), (direct(t), mirrored(t))
            elif slug == "mirror_spatial_relations":
                # "In the mirror you can see two objects": both in the mirror, neither directly.
                for k in "AB":
                    assert mirrored(m[k]) > 10 and direct(m[k]) == 0
            elif slug == "deformable":
                assert direct(m["target"]) == 0 and direct(m["cloth"]) > 100  # hidden under the cloth
            else:
                # The reference image is lit normally, the episode's light is dim and tinted.
                ref = sim.render(s.camera, light=s.reference_light).rgb.astype(float).mean()
                assert frame.rgb.astype(float).mean() < 0.85 * ref
        finally:
            sim.close()


def test_the_cloth_colour_word_matches_its_rendered_pixels() -> None:
    """'white cloth' renders near white and 'gray cloth' mid-grey, both without a tint."""
    from eviseek.envs.tabletop.sim import TabletopSim

    seen = set()
    for q in generate_questions(6, 31, subcategories=["deformable"], render_images=False):
        s = SceneSpec.model_validate(q.scene)
        sim = TabletopSim(s)
        try:
            frame = sim.render(s.camera)
            name = q.metadata["cloth"]
            px = frame.rgb[frame.segmentation == sim.uid[name]].astype(float).mean(axis=0)
        finally:
            sim.close()
        word = name.split("_")[0]
        seen.add(word)
        assert np.ptp(px) < 12, (name, px)
        assert (px.mean() > 200) if word == "white" else (90 < px.mean() < 170), (name, px)
    assert seen == {"white", "gray"}


def test_every_draft_of_the_split_seeds_is_generated() -> None:
    """Drafting never gives up: every family drafts its first 60 questions for each split's seed
    (the mirror family failed on about one draw in ten, e.g. test question 2, and Category
    Ambiguity on test question 18, which made tabletop:test impossible to generate)."""
    from eviseek.envs.tabletop.generate import SPLITS, draft_rng

    for fam in all_families():
        for spec in SPLITS.values():
            for index in range(60):
                fam.draft_design(draft_rng(spec.seed, fam.slug, index), None)


def test_mirror_pairs_screened_in_batches_are_the_pairs_drawn_one_by_one() -> None:
    """The mirror family screens its pair draws a batch at a time; drawing them one by one and
    deciding each with the exact tests must give the same pair (or none) and leave the generator
    in the same state, so the questions do not depend on the batching."""
    from eviseek.envs.tabletop.families import mirror_spatial_relations as msr
    from eviseek.envs.tabletop.families._common import unit
    from eviseek.envs.tabletop.families._mirror import make_mirror, plane_of

    outcomes: Counter[bool] = Counter()
    for trial in range(24):
        g = np.random.default_rng([77, trial])
        facing = float(g.uniform(0, 360))
        n, across = unit(facing), unit(facing + 90)
        face = -n * 0.3 + g.uniform(-0.05, 0.05, 2)
        # Narrower mirrors and farther cameras than the family's: some of these geometries admit
        # no pair at all, others only one found after hundreds of draws.
        plane = plane_of(
            make_mirror((float(face[0]), float(face[1])), facing, float(g.uniform(0.2, 0.48)), 0.32)
        )
        cam_xy = face + n * float(g.uniform(0.35, 0.7))
        eye = np.array([cam_xy[0], cam_xy[1], float(g.uniform(0.15, 0.25))])
        want = bool(g.integers(2))
        batched, single = np.random.default_rng([78, trial]), np.random.default_rng([78, trial])
        batched.integers(2), single.integers(2)  # as in the family, a bounded integer first
        geo = msr.PairGeometry(plane, n, across, cam_xy, eye, want)
        got = msr._place_pair(batched, geo)
        expected = None
        for _ in range(msr.PAIR_DRAWS):
            u = np.array([[single.uniform(0.08, 0.4), single.uniform(-0.26, 0.26)] for _ in range(2)])
            expected = msr._pair_at(u, geo)
            if expected is not None:
                break
        assert (got is None) == (expected is None), trial
        if got is not None and expected is not None:
            assert all((a == b).all() for a, b in zip(got[0], expected[0], strict=True)), trial
            assert got[1:] == expected[1:], trial
        assert batched.bit_generator.state == single.bit_generator.state, trial
        assert batched.integers(1 << 40) == single.integers(1 << 40), trial
        outcomes[got is None] += 1
    assert outcomes[True] and outcomes[False], outcomes  # both kinds of geometry were tried

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
import itertools
import math
from collections import Counter, defaultdict

import numpy as np
import pytest
from scipy.stats import binomtest

from eviseek.agents import make_agent
from eviseek.answers import score_answer
from eviseek.envs import as_async
from eviseek.envs.tabletop import TabletopEnv
from eviseek.envs.tabletop.colors import rgb
from eviseek.envs.tabletop.families import all_families
from eviseek.envs.tabletop.generate import QuestionBuilder
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
ALPHA = 0.01
"""Per-test significance level (ours): a fixed seed either passes or not, so this bounds how
often a fair generator would be flagged by bad luck when the seed changes."""


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


def chance(q: Question, family_set: list[Question]) -> float:
    """The accuracy of a uniform guess over the answer space for ``q``."""
    c = q.contract
    if c.kind == "sequence" and c.options:
        accepted = q.ground_truth if isinstance(q.ground_truth, list) else [q.ground_truth]
        return len(accepted) / math.factorial(len(c.options))
    if c.options:
        return 1.0 / len(c.options)
    values = {str(x.ground_truth) for x in family_set}
    return 1.0 / max(1, len(values))


def correct(q: Question, raw: str | None) -> bool:
    return bool(score_answer(q, raw).correct)


def truths(q: Question) -> list[str]:
    return [str(t) for t in (q.ground_truth if isinstance(q.ground_truth, list) else [q.ground_truth])]


def prior_guess(q: Question, train: list[Question]) -> str | None:
    """A text-only learner fitted on ``train``: the option most often right when offered (by its
    words and its position), the commonest integer, or names ordered by their words' mean rank."""
    c = q.contract
    if c.kind == "sequence" and c.options:
        rank: dict[str, list[float]] = defaultdict(list)
        for t in train:
            first = truths(t)[0].replace(",", "|").split("|")
            for pos, name in enumerate(first):
                for word in name.split("_")[1:] or [name]:
                    rank[word].append(pos / max(1, len(first) - 1))

        def score(name: str) -> float:
            vals = [v for w in name.split("_")[1:] or [name] for v in rank.get(w, [])]
            return float(np.mean(vals)) if vals else 0.5

        return ",".join(sorted(c.options, key=score))
    if c.options:
        right: Counter[str] = Counter()
        offered: Counter[str] = Counter()
        for t in train:
            for o in t.contract.options or []:
                key = o.split("_")[-1]
                offered[key] += 1
                right[key] += o in truths(t)
        return max(c.options, key=lambda o: right[o.split("_")[-1]] / max(1, offered[o.split("_")[-1]]))
    counts = Counter(str(t.ground_truth) for t in train)
    return counts.most_common(1)[0][0] if counts else None


def position_guess(q: Question, train: list[Question]) -> str | None:
    """The option at the position most often right in ``train`` (option questions only)."""
    c = q.contract
    if not c.options or c.kind == "sequence":
        return None
    at = Counter(
        t.contract.options.index(truths(t)[0])
        for t in train
        if t.contract.options and truths(t)[0] in t.contract.options
    )
    pos = at.most_common(1)[0][0] if at else 0
    return c.options[min(pos, len(c.options) - 1)]


def above_chance(hits: int, qs: list[Question]) -> float:
    """One-sided exact binomial p-value of ``hits`` against the set's mean chance accuracy."""
    p = float(np.mean([chance(q, qs) for q in qs]))
    return binomtest(hits, len(qs), p, alternative="greater").pvalue


def test_the_text_alone_does_not_answer_any_subcategory(questions: dict[str, list[Question]]) -> None:
    failures = []
    for sub, qs in questions.items():
        for name, guess in (("word prior", prior_guess), ("position prior", position_guess)):
            hits = 0
            for i, q in enumerate(qs):
                g = guess(q, qs[:i] + qs[i + 1 :])  # leave one out
                hits += g is not None and correct(q, g)
            pval = above_chance(hits, qs)
            if pval < ALPHA:
                failures.append(f"{sub}: {name} right {hits}/{len(qs)} (p={pval:.4f})")
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
    failures = []
    for sub, qs in questions.items():
        opt = [q for q in qs if q.contract.options and q.contract.kind != "sequence"]
        by_k: dict[int, Counter[int]] = defaultdict(Counter)
        offered: Counter[str] = Counter()
        right: Counter[str] = Counter()
        for q in opt:
            options = q.contract.options or []
            t = truths(q)[0]
            if t in options:
                by_k[len(options)][options.index(t)] += 1
            for o in options:
                offered[o] += 1
                right[o] += o == t
        for k, counts in by_k.items():
            n = sum(counts.values())
            for pos, c in counts.items():
                pval = binomtest(c, n, 1 / k, alternative="greater").pvalue
                if pval < ALPHA:
                    failures.append(f"{sub}: option {pos + 1} of {k} right {c}/{n} (p={pval:.4f})")
        for o, n in offered.items():
            k = np.mean([len(q.contract.options or []) for q in opt if o in (q.contract.options or [])])
            pval = binomtest(right[o], n, 1 / k, alternative="greater").pvalue
            if n >= 6 and pval < ALPHA:
                failures.append(f"{sub}: {o!r} right {right[o]}/{n} times offered (p={pval:.4f})")
        if not opt and qs[0].contract.kind == "integer":
            values = Counter(str(q.ground_truth) for q in qs)
            top, c = values.most_common(1)[0]
            pval = binomtest(c, len(qs), 1 / len(values), alternative="greater").pvalue
            if pval < ALPHA:
                failures.append(f"{sub}: answer {top} in {c}/{len(qs)} (p={pval:.4f})")
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

FIRST_VIEW_ANSWERABLE = {"Material Transparency", "Liquid Volume", "Physical Contact", "Correspondence"}
"""Subcategories exempt from the image-statistics check. The paper never says in words which
subcategories the first view answers; we read it off its Table 5: these are the ones where
Passive (one pre-action view) scores at least as high as both exploring agents (Single-model and
EviSeek) under both backbones, Qwen and Gemini. Every other subcategory needs exploring."""

COLOUR_RADIUS = 60.0
"""RGB distance (0-255 scale) within which a pixel counts as an object's colour (ours: lit faces
render their paint at 0.55-1.1 times its brightness)."""
FEATURE_SIZE = (160, 120)
"""First views are rendered at this size for the features (ours: a quarter of the pixels of a
question's image; areas and positions keep their order)."""


def _named_objects(q: Question, spec: SceneSpec) -> tuple[list[str], bool]:
    """The objects a learner looks at: the options, when they are objects of the scene (then each
    candidate gets its own features), else the objects the text names, in the order it names them."""
    names = spec.names()
    options = list(q.contract.options or [])
    if options and all(o in names for o in options):
        return options, True
    text = q.text.lower()
    found = [(text.find(n.replace("_", " ")), n) for n in names if n.replace("_", " ") in text]
    return [n for _, n in sorted(found)][:3], False


def first_view_features(q: Question) -> tuple[np.ndarray, bool]:
    """Per-object features of what the question's first view shows: the object's pixel area
    (seen directly or in a mirror alike, as a picture shows both), the centroid column and row of
    those pixels (as shares of the image), and its colour share (the share of the image within a
    small RGB distance of the object's paint, read from the pixels). One row per candidate option,
    or one flat row for the named objects."""
    spec = SceneSpec.from_question(q.scene)
    sim = TabletopSim(spec, width=FEATURE_SIZE[0], height=FEATURE_SIZE[1])
    try:
        for change in spec.changes:
            sim.apply_change(change)
        frame = sim.render(spec.camera)
        objects, per_option = _named_objects(q, spec)
        total = float(frame.segmentation.size)
        rows = []
        pixels = frame.rgb[..., :3].astype(float)
        for name in objects:
            uid = sim.uid[name]
            mask = frame.segmentation == uid
            if frame.reflection is not None:
                mask = mask | (frame.reflection == uid)
            area = float(mask.sum())
            if area > 0:
                ys, xs = np.nonzero(mask)
                cx, cy = float(xs.mean()) / FEATURE_SIZE[0], float(ys.mean()) / FEATURE_SIZE[1]
            else:
                cx = cy = -1.0
            paint = np.asarray(rgb(spec.object(name).color), dtype=float)
            paint = paint * 255.0 if paint.max() <= 1.0 else paint
            share = float((np.linalg.norm(pixels - paint, axis=-1) < COLOUR_RADIUS).mean())
            rows.append([area / total, cx, cy, share])
    finally:
        sim.close()
    if per_option:
        return np.asarray(rows, dtype=float), True
    flat = np.zeros(12)
    for i, row in enumerate(rows):
        flat[4 * i : 4 * i + 4] = row
    return flat, False


def _label(q: Question) -> str:
    return truths(q)[0]


def stump_guess(x: np.ndarray, train: list[tuple[np.ndarray, str]]) -> str | None:
    """A decision stump fitted on ``train``: the one feature and threshold whose two sides, each
    answered with its commonest label, get the most training answers right."""
    if not train:
        return None
    xs = np.stack([t[0] for t in train])
    labels = [t[1] for t in train]
    best = (Counter(labels).most_common(1)[0][1], -1, 0.0, labels[0], labels[0])
    for j in range(xs.shape[1]):
        values = np.unique(xs[:, j])
        for lo, hi in itertools.pairwise(values):
            cut = (lo + hi) / 2
            below = Counter(lab for v, lab in zip(xs[:, j], labels, strict=True) if v <= cut)
            above = Counter(lab for v, lab in zip(xs[:, j], labels, strict=True) if v > cut)
            (lb, nb), (la, na) = below.most_common(1)[0], above.most_common(1)[0]
            if nb + na > best[0]:
                best = (nb + na, j, float(cut), lb, la)
    _, j, cut, lb, la = best
    if j < 0:
        return lb
    return lb if x[j] <= cut else la


def rank_guess(rows: np.ndarray, options: list[str], train: list[tuple[np.ndarray, list[str], str]]) -> str:
    """The option that is largest (or smallest) in the one feature that picked the right option
    most often in ``train`` (each training item: per-option rows, its options, its answer)."""
    best, rule = -1, (0, True)
    for j in range(rows.shape[1]):
        for largest in (True, False):
            hits = 0
            for r, opts, answer in train:
                pick_at = int(np.argmax(r[:, j]) if largest else np.argmin(r[:, j]))
                hits += opts[pick_at] == answer
            if hits > best:
                best, rule = hits, (j, largest)
    j, largest = rule
    return options[int(np.argmax(rows[:, j]) if largest else np.argmin(rows[:, j]))]


def test_first_view_image_statistics_do_not_answer_exploring_subcategories(
    questions: dict[str, list[Question]],
) -> None:
    """A leave-one-out learner on simple statistics of the first view (target pixel area, position,
    colour share) stays at chance on every subcategory whose answer needs exploring."""
    failures, checked = [], []
    for sub, qs in questions.items():
        if sub in FIRST_VIEW_ANSWERABLE or len(qs) < 4:
            continue
        usable = [q for q in qs if q.contract.kind != "sequence"]
        feats = [first_view_features(q) for q in usable]
        per_option = [q for q, (_, opt) in zip(usable, feats, strict=True) if opt]
        hits = 0
        for i, (q, (x, opt)) in enumerate(zip(usable, feats, strict=True)):
            rest = [(f, o, t) for k, (t, (f, o)) in enumerate(zip(usable, feats, strict=True)) if k != i]
            if opt:
                train = [(f, list(t.contract.options or []), _label(t)) for f, o, t in rest if o]
                guess = rank_guess(x, list(q.contract.options or []), train) if train else None
            else:
                guess = stump_guess(x, [(f, _label(t)) for f, o, t in rest if not o])
            hits += guess is not None and correct(q, guess)
        pval = above_chance(hits, usable) if usable else 1.0
        checked.append(f"{sub}: {hits}/{len(usable)} ({len(per_option)} by option)")
        if pval < ALPHA:
            failures.append(f"{sub}: first-view statistics right {hits}/{len(usable)} (p={pval:.4f})")
    assert len(checked) >= 15, checked
    assert not failures, failures

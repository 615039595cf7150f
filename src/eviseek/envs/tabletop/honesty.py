"""Honesty checks of generated questions: can something that does not explore answer them?

Three kinds of shortcut are tested, each with an exact one-sided binomial test against chance:

* **the text alone**: a leave-one-out learner that reads only the words of the question and its
  options (which option word or position was right most often on the other questions, the
  commonest integer, names ordered by their words' mean rank);
* **answer balance**: no option position, no option text, and no integer answer may be right
  more often than chance allows;
* **the first view's pixels**: a leave-one-out learner on simple statistics of the first view of
  the objects the question names (pixel area, centre and lowest row of those pixels, and the
  share of the image in each one's colour). For options that are objects it picks the option
  largest or smallest in the one feature that was right most often; otherwise a one-feature
  decision stump.

:data:`FIRST_VIEW_ANSWERABLE` names the subcategories exempt from the pixel check, with reasons.
``scripts/tabletop_honesty.py`` runs every check over the named splits and extra seeds; the tests
run them on their own generated sets.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

import numpy as np
from scipy.stats import binomtest

from eviseek.answers import score_answer
from eviseek.envs.tabletop.colors import rgb
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.types import Question

ALPHA = 0.01
"""Per-check significance level (ours): a fixed seed either passes or not, so this bounds how
often a fair generator would be flagged by bad luck when the seed changes."""

FIRST_VIEW_ANSWERABLE: dict[str, str] = {
    "Material Transparency": "Table 5: Passive >= both exploring agents under both backbones",
    "Liquid Volume": "Table 5: Passive >= both exploring agents under both backbones",
    "Physical Contact": "Table 5: Passive >= both exploring agents under both backbones",
    "Correspondence": "Table 5: Passive >= both exploring agents under both backbones",
}
"""Subcategories exempt from the first-view pixel check, and why. The paper never says in words
which subcategories the first view answers; we read it off its Table 5: these are the ones where
Passive (one pre-action view) scores at least as high as both exploring agents (Single-model and
EviSeek) under both backbones, Qwen and Gemini. Every other subcategory needs exploring."""

PASSIVE_ANSWERABLE: dict[str, str] = {
    "Agent Observation": (
        "the question hands over reference images of the robot's path, taken from the first pose, "
        "as ESI-Bench hands over the robot's observations; ESI-Bench's own Passive scores 36.8 and "
        "37.6 (Table 5, Qwen and Gemini) against a chance of 25 with four counts"
    ),
}
"""Subcategories exempt from the check that Passive (the first view and the question's reference
images, no exploring) stays at chance with the reference policy
(``scripts/tabletop_passive_check.py``), and why. Not exempt from the first-view pixel learner."""

COLOUR_RADIUS = 60.0
"""RGB distance (0-255 scale) within which a pixel counts as an object's colour (ours: lit faces
render their paint at 0.55-1.1 times its brightness)."""
FEATURE_SIZE = (160, 120)
"""First views are rendered at this size for the features (ours: a quarter of the pixels of a
question's image; areas and positions keep their order)."""
N_FEATURES = 5
"""Per object: pixel area share, centre column, centre row, lowest row, colour share."""


def truths(q: Question) -> list[str]:
    """The accepted answers of ``q`` as strings."""
    return [str(t) for t in (q.ground_truth if isinstance(q.ground_truth, list) else [q.ground_truth])]


def correct(q: Question, raw: str | None) -> bool:
    """Whether ``raw`` scores as right under ``q``'s contract."""
    return bool(score_answer(q, raw).correct)


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


def above_chance(hits: int, qs: list[Question]) -> float:
    """One-sided exact binomial p-value of ``hits`` against the set's mean chance accuracy."""
    p = float(np.mean([chance(q, qs) for q in qs]))
    return float(binomtest(hits, len(qs), p, alternative="greater").pvalue)


# -- the text alone ---------------------------------------------------------------------------


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


def text_failures(sub: str, qs: list[Question]) -> list[str]:
    """The text-only learners that beat chance on ``qs`` (leave one out), as report lines."""
    out = []
    guesses: tuple[tuple[str, Callable[[Question, list[Question]], str | None]], ...] = (
        ("word prior", prior_guess),
        ("position prior", position_guess),
    )
    for name, guess in guesses:
        hits = 0
        for i, q in enumerate(qs):
            g = guess(q, qs[:i] + qs[i + 1 :])
            hits += g is not None and correct(q, g)
        pval = above_chance(hits, qs)
        if pval < ALPHA:
            out.append(f"{sub}: {name} right {hits}/{len(qs)} (p={pval:.4f})")
    return out


# -- answer balance ---------------------------------------------------------------------------


def balance_failures(sub: str, qs: list[Question]) -> list[str]:
    """Option positions, option texts or integer answers right more often than chance allows."""
    out = []
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
                out.append(f"{sub}: option {pos + 1} of {k} right {c}/{n} (p={pval:.4f})")
    for o, n in offered.items():
        sizes = [len(q.contract.options or []) for q in opt if o in (q.contract.options or [])]
        mean_k = float(np.mean(sizes))
        pval = binomtest(right[o], n, 1 / mean_k, alternative="greater").pvalue
        if n >= 6 and pval < ALPHA:
            out.append(f"{sub}: {o!r} right {right[o]}/{n} times offered (p={pval:.4f})")
    if not opt and qs and qs[0].contract.kind == "integer":
        values = Counter(str(q.ground_truth) for q in qs)
        top, c = values.most_common(1)[0]
        pval = binomtest(c, len(qs), 1 / len(values), alternative="greater").pvalue
        if pval < ALPHA:
            out.append(f"{sub}: answer {top} in {c}/{len(qs)} (p={pval:.4f})")
    return out


# -- the first view's pixels ------------------------------------------------------------------


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
    (seen directly or in a mirror alike, as a picture shows both), the centre column and row and
    the lowest row of those pixels (as shares of the image), and its colour share (the share of
    the image within a small RGB distance of the object's paint). One row per candidate option,
    or one flat row for the named objects."""
    from eviseek.envs.tabletop.sim import TabletopSim

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
                low = float(ys.max()) / FEATURE_SIZE[1]
            else:
                cx = cy = low = -1.0
            paint = np.asarray(rgb(spec.object(name).color), dtype=float)
            paint = paint * 255.0 if paint.max() <= 1.0 else paint
            share = float((np.linalg.norm(pixels - paint, axis=-1) < COLOUR_RADIUS).mean())
            rows.append([area / total, cx, cy, low, share])
    finally:
        sim.close()
    if per_option:
        return np.asarray(rows, dtype=float), True
    flat = np.zeros(3 * N_FEATURES)
    for i, row in enumerate(rows):
        flat[N_FEATURES * i : N_FEATURES * (i + 1)] = row
    return flat, False


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


def first_view_hits(qs: list[Question]) -> tuple[int, list[Question]]:
    """Leave-one-out hits of the first-view learner on ``qs`` (sequence answers left out), and
    the questions it was scored on."""
    usable = [q for q in qs if q.contract.kind != "sequence"]
    feats = [first_view_features(q) for q in usable]
    hits = 0
    for i, (q, (x, opt)) in enumerate(zip(usable, feats, strict=True)):
        rest = [(f, o, t) for k, (t, (f, o)) in enumerate(zip(usable, feats, strict=True)) if k != i]
        if opt:
            train = [(f, list(t.contract.options or []), truths(t)[0]) for f, o, t in rest if o]
            guess = rank_guess(x, list(q.contract.options or []), train) if train else None
        else:
            guess = stump_guess(x, [(f, truths(t)[0]) for f, o, t in rest if not o])
        hits += guess is not None and correct(q, guess)
    return hits, usable


def first_view_failure(sub: str, qs: list[Question]) -> tuple[str, str | None]:
    """The learner's score line on ``qs`` and, when it beats chance, a failure line."""
    hits, usable = first_view_hits(qs)
    pval = above_chance(hits, usable) if usable else 1.0
    line = f"{sub}: first-view statistics right {hits}/{len(usable)} (p={pval:.4f})"
    return line, (line if pval < ALPHA else None)


def by_subcategory(questions: Iterable[Question]) -> dict[str, list[Question]]:
    """Questions grouped by subcategory, in first-seen order."""
    out: dict[str, list[Question]] = {}
    for q in questions:
        out.setdefault(q.subcategory, []).append(q)
    return out

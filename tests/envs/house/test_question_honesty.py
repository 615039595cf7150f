"""House questions carry no answer in their text, and their colour words match the pixels.

As on the tabletop (tests/envs/tabletop/test_question_honesty.py): the Blind agent's guess and a
text-only learner trained on other seeds stay at chance on every kind, and the colour a question
names is the colour the reference policy's pixel classifier reads off the object in a render.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np
import pytest

from eviseek.answers import score_answer
from eviseek.envs.house import HouseEnv, HouseSpec, build_question
from eviseek.envs.house.questions import EXPRESS_KINDS, LTN_LENGTH_WEIGHTS, sequence_chance
from eviseek.models.reference.house import read_ask, solve_house
from eviseek.models.reference.house_express import SURFACES
from eviseek.models.reference.vision import COLOR_NAMES, _classify
from eviseek.types import Pose, Question

ALL_KINDS = (*EXPRESS_KINDS, "traversable_passage", "regional_boundary", "long_term_navigation")
N = 8
CHANCE = {
    "object": 1 / 8,
    "existence": 1 / 2,
    # Half the questions ask one of 9 colours, half "big or small", each answer as often as the next.
    "attribute": (1 / 9 + 1 / 2) / 2,
    # The room a question names holds two kinds of surface, each the answer as often as the other.
    "location": 1 / 2,
    "state": 1 / 2,
    "knowledge": 1 / 8,
    "counting": 1 / 4,
}
CHANCE.update({"traversable_passage": 1 / 4, "regional_boundary": 1 / 3})
CHANCE["long_term_navigation"] = sequence_chance(6)  # 1/17: see LTN_LENGTH_WEIGHTS
N_LTN = 34
"""Long-Term Navigation questions per seed: chance is 1/17, so 8 would allow no margin at all."""


def _questions(seed: int) -> dict[str, list[Question]]:
    return {
        k: [build_question(k, seed, i) for i in range(N_LTN if k == "long_term_navigation" else N)]
        for k in ALL_KINDS
    }


def _route_learner(train: list[Question]) -> Callable[[Question], str]:
    """A text-only learner that answers room sequences: the answer it saw most often for the same
    two rooms on other seeds, else a route of the length it saw most often through the rooms it
    saw most often between two others (a shortcut such as "always 3 rooms" or "always through the
    hallway" would show here)."""
    by_pair: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    lengths: Counter[int] = Counter()
    between: Counter[str] = Counter()
    for q in train:
        seq = str(q.ground_truth).split(" | ")
        by_pair[(seq[0], seq[-1])][str(q.ground_truth)] += 1
        lengths[len(seq)] += 1
        between.update(seq[1:-1])

    def answer(q: Question) -> str:
        ask = read_ask(q.text, list(q.contract.options or []))
        assert ask is not None and ask.room is not None and ask.other is not None
        seen = by_pair.get((ask.room, ask.other))
        if seen:
            return seen.most_common(1)[0][0]
        n = lengths.most_common(1)[0][0]
        mids = [r for r, _ in between.most_common() if r in (q.contract.options or [])]
        mids = [r for r in mids if r not in (ask.room, ask.other)][: n - 2]
        return " | ".join([ask.room, *mids, ask.other])

    return answer


def _words(q: Question) -> list[str]:
    return q.text.lower().replace("?", " ").replace(",", " ").replace(".", " ").split()


@pytest.mark.slow
def test_blind_and_a_text_only_learner_stay_at_chance_on_every_kind() -> None:
    train, test = _questions(5100), _questions(5101)
    for kind in ALL_KINDS:
        # Blind: the reference policy's guess with no image.
        blind = 0
        for q in test[kind]:
            ask = read_ask(q.text, list(q.contract.options or []))
            assert ask is not None and ask.kind == kind, q.text
            blind += score_answer(q, solve_house(ask, []).answer or "").correct
        # A text-only learner: per word, the answers it came with on other seeds (naive Bayes with
        # add-one smoothing); for option questions, also the answer's position among the options.
        votes: dict[str, Counter[str]] = defaultdict(Counter)
        prior: Counter[str] = Counter()
        for q in train[kind]:
            prior[str(q.ground_truth)] += 1
            for w in set(_words(q)):
                votes[w][str(q.ground_truth)] += 1
        learned = 0
        route = _route_learner(train[kind]) if kind == "long_term_navigation" else None
        for q in test[kind]:
            if route is not None:
                learned += score_answer(q, route(q)).correct
                continue
            answers = list(q.contract.options or []) if q.contract.kind == "option" else list(prior)
            if kind == "counting":
                answers = ["0", "1", "2", "3"]
            words = set(_words(q))
            scores = {
                a: math.log(prior[a] + 1) + sum(math.log(votes[w][a] + 1) for w in words) for a in answers
            }
            guess = max(answers, key=lambda a: scores[a]) if answers else ""
            learned += score_answer(q, guess).correct
        chance = CHANCE[kind]
        n = len(test[kind])
        # At chance: no more right than chance plus 2.5 standard deviations of n guesses.
        limit = n * chance + 2.5 * math.sqrt(n * chance * (1 - chance))
        assert blind <= limit, (kind, "blind", blind, limit)
        assert learned <= limit, (kind, "text-only", learned, limit)


def _view_of(spec: HouseSpec, x: float, y: float, z: float) -> Pose:
    """A level pose 1.1 m from a point, on the side toward its room's middle, facing it."""
    room = next(r for r in spec.rooms if r.contains(x, y))
    cx, cy = room.centre
    d = math.hypot(cx - x, cy - y) or 1.0
    px, py = x + (cx - x) / d * 1.1, y + (cy - y) / d * 1.1
    return Pose(x=px, y=py, z=spec.camera_height, yaw=math.degrees(math.atan2(y - py, x - px)), pitch=0.0)


def test_colour_words_match_the_pixels() -> None:
    env = HouseEnv(width=320, height=240)
    checked = 0
    try:
        for i in range(0, 18, 2):  # even indices ask a colour (odd ones a size)
            q = build_question("attribute", 5200, i)
            spec = HouseSpec.from_question(q.scene)
            obj = next(it for it in spec.items if it.kind == "object" and it.color == q.ground_truth)
            spec.start = _view_of(spec, *obj.position)
            q = q.model_copy(update={"scene": spec.model_dump(mode="json")})
            obs, _ = env.reset(options={"question": q})
            assert obs.segmentation is not None
            mask = obs.segmentation == env.oracle.body_uids()[obj.name]
            if mask.sum() < 30:
                continue  # hidden behind something from this spot
            idx, ok = _classify(obs.image.array()[mask][None])
            labels = idx[ok][idx[ok] < len(COLOR_NAMES)]
            assert labels.size, q.id
            word = COLOR_NAMES[int(np.bincount(labels).argmax())]
            assert word == q.ground_truth, (q.id, word, q.ground_truth)
            checked += 1
    finally:
        env.close()
    assert checked >= 6


def test_stated_chance_is_the_answer_distributions() -> None:
    # Chance as the tables state it must be what the generated answers allow: the most common
    # answer of a kind (for option kinds whose options vary, its position among the options) is
    # no more frequent than chance says, and Long-Term Navigation asks route lengths in the
    # stated proportions (2 rooms included), so any one sequence answers 1 question in 17.
    per_kind = {
        k: [build_question(k, 5300, i) for i in range(17 if k == "long_term_navigation" else 12)]
        for k in ALL_KINDS
    }
    for kind, qs in per_kind.items():
        if kind == "long_term_navigation":
            lengths = Counter(len(str(q.ground_truth).split(" | ")) for q in qs)
            total = sum(LTN_LENGTH_WEIGHTS.values())
            assert lengths == Counter({n: w * len(qs) // total for n, w in LTN_LENGTH_WEIGHTS.items()})
            continue
        if kind == "traversable_passage":
            answers = Counter((q.contract.options or []).index(str(q.ground_truth)) for q in qs)
        elif kind == "location":
            # Given the room, one of its two surfaces (in name order): what the text leaves open.
            answers = Counter(
                sorted(t for t in SURFACES[q.metadata["target"]["room"]]).index(str(q.ground_truth))
                for q in qs
            )
        elif kind == "attribute":
            # Per aspect asked: the best fixed guess for each, weighted as often as each is asked.
            colours = Counter(str(q.ground_truth) for q in qs[0::2]).most_common(1)[0][1] / len(qs[0::2])
            sizes = Counter(str(q.ground_truth) for q in qs[1::2]).most_common(1)[0][1] / len(qs[1::2])
            assert (colours + sizes) / 2 <= CHANCE[kind] + 1 / len(qs) + 1e-9, (kind, colours, sizes)
            continue
        else:
            answers = Counter(str(q.ground_truth) for q in qs)
        top = answers.most_common(1)[0][1] / len(qs)
        assert top <= CHANCE[kind] + 1 / len(qs) + 1e-9, (kind, answers)

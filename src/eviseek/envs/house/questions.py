"""House questions: EXPRESS-Bench's seven question types and ESI-Bench's Cognitive Mapping kinds.

Every question is built for one freshly generated house, and the house is edited to make the
drawn answer true (the colour is painted on, the objects are put in the room), so answers are
balanced by construction: the answer of question ``index`` of a kind is the ``index``-th entry of
that kind's answer list in a seeded order. A text-only agent therefore has nothing better than
chance to go on. Each question records a reference answer, the target location (for d_T and
E_path), the shortest-path length from the start to the target, and the decisive evidence as
segmentation-mask pieces (the shared :mod:`~eviseek.envs.support` grader scores them).

Kinds (family / subcategory):

- Open EQA: EXPRESS-Bench's seven question types, asked in these houses and answered in free text
  (the prompt shows no list; the contract keeps a canonical vocabulary the scorer maps a reply
  onto, and the EXPRESS judge reads the reply as written). What each asks here is ours, within
  what the renderer draws: ``object`` (what stands on a piece of furniture), ``existence`` (is
  there an X in a room), ``attribute`` (an object's colour, or whether it is big or small for its
  kind), ``location`` (what an object stands on, where in its room), ``state`` (whether the TV is
  on or off), ``knowledge`` (what a seen object is used for) and ``counting`` (how many X in a
  room). docs/house.md lists what EXPRESS-Bench asks that these do not.
- Cognitive Mapping (ESI-Bench's subcategories and answer formats: room names, ``|``-separated
  room sequences; ours to ask in houses, not EXPRESS-Bench's): ``traversable_passage``,
  ``regional_boundary``, ``long_term_navigation``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eviseek import env_ids
from eviseek.envs.house.catalogue import COLORS, FURNITURE, SIZE_SCALES, SMALL_OBJECTS, STATES, USES
from eviseek.envs.house.grid import OccupancyGrid
from eviseek.envs.house.layout import generate_house, place_object, surfaces
from eviseek.envs.house.spec import HouseSpec, ItemSpec
from eviseek.envs.support import AnyOf, ViewEvidence
from eviseek.types import AnswerContract, Pose, Question

ENV_ID = env_ids.HOUSE
GENERATOR_VERSION = 4
"""Bumped whenever the questions a seed gives change (docs/house.md, "Generator versions")."""
LTN_LENGTH_WEIGHTS: dict[int, int] = {2: 1, 3: 4, 4: 12}
"""Long-Term Navigation: how often a route of each length (rooms, the two named included) is
asked, per 17 questions. The weights are the numbers of well-formed answers of that length in a
6-room house (1 with no room between, 4 with one of the 4 others, 4 x 3 with two), so every
well-formed sequence of up to 4 rooms is equally likely to be the answer, and a reader of the text
alone, knowing this, is right 1 time in 17 whatever it answers (ours; before version 3 routes had
at least 3 rooms and mostly exactly 3, and "start | any room | goal" scored 12.7 %)."""
OPEN_FAMILY = "Open EQA"
FREE_TEXT = "Answer in your own words, in a short phrase."
"""What the prompt of an EXPRESS-Bench kind asks for (ours): free text, no list of answers."""
MAPPING_FAMILY = "Cognitive Mapping"
OBJECT_MIN_FRACTION = 0.3
OBJECT_MIN_PIXELS = 40
ROOM_MIN_PIXELS = 400
"""A room counts as seen in a frame when its floor covers this many pixels (at 320x240)."""
MAX_TRIES = 20


@dataclass
class Draft:
    """A question before it becomes a :class:`Question` record."""

    text: str
    contract: AnswerContract
    answer: str
    target: tuple[float, float, float]
    target_room: str
    evidence: list[Any]
    start_room: str | None = None
    """Room the agent must start in (``None``: any room other than the target's)."""
    extra: dict[str, Any] = field(default_factory=dict)


Builder = Callable[[np.random.Generator, HouseSpec, int], Draft | None]


def _pick(rng: np.random.Generator, values: list[Any]) -> Any:
    return values[int(rng.integers(len(values)))]


def _balanced(values: list[Any], kind: str, seed: int, index: int) -> Any:
    """The ``index``-th value of a seeded permutation cycle: every value equally often."""
    order = np.random.default_rng([seed, zlib.crc32(kind.encode()), 7]).permutation(len(values))
    return values[int(order[index % len(values)])]


def _object_piece(it: ItemSpec) -> ViewEvidence:
    return ViewEvidence(
        objects=[it.name],
        min_fraction=OBJECT_MIN_FRACTION,
        min_pixels=OBJECT_MIN_PIXELS,
        label=f"the {it.category}",
    )


def _room_piece(*rooms: str) -> ViewEvidence:
    return ViewEvidence(
        objects=[f"floor:{r}" for r in rooms],
        min_fraction=0.0,
        min_pixels=ROOM_MIN_PIXELS,
        label=" and ".join(rooms) + (" in one view" if len(rooms) > 1 else ""),
    )


def _remove(spec: HouseSpec, keep: Callable[[ItemSpec], bool]) -> None:
    spec.items = [it for it in spec.items if keep(it)]


def _rooms_with_surfaces(spec: HouseSpec) -> list[str]:
    return [r.name for r in spec.rooms if surfaces(spec, r.name)]


def _place_in_room(
    rng: np.random.Generator, spec: HouseSpec, category: str, color: str, room: str
) -> ItemSpec | None:
    tops = surfaces(spec, room)
    for _ in range(10):
        obj = place_object(rng, spec, category, color, _pick(rng, tops))
        if obj is not None:
            spec.items.append(obj)
            return obj
    return None


# ----------------------------------------------------------------------------- EXPRESS-Bench's kinds


def _free(kind: str, options: list[str] | None = None) -> AnswerContract:
    """A free-text contract (EXPRESS-Bench's answers are free text): the prompt shows
    :data:`FREE_TEXT`, never a list; ``options`` is the canonical vocabulary the scorer maps a
    reply onto (the one entry it names as whole words)."""
    return AnswerContract(kind=kind, options=options, lettered=False, task_format=FREE_TEXT)  # type: ignore[arg-type]


def _object(rng: np.random.Generator, spec: HouseSpec, index: int, *, seed: int = 0) -> Draft | None:
    cat = _balanced(sorted(SMALL_OBJECTS), "object", seed, index)
    room = _pick(rng, _rooms_with_surfaces(spec))
    top = _pick(rng, surfaces(spec, room))
    _remove(spec, lambda it: it.on != top.name)
    obj = place_object(rng, spec, cat, _pick(rng, list(COLORS)), top)
    if obj is None:
        return None
    spec.items.append(obj)
    return Draft(
        text=f"What is standing on the {top.category} in the {room}?",
        contract=_free("option", sorted(SMALL_OBJECTS)),
        answer=cat,
        target=top.position,
        target_room=room,
        evidence=[_object_piece(obj)],
    )


def _attribute(rng: np.random.Generator, spec: HouseSpec, index: int, *, seed: int = 0) -> Draft | None:
    # Even indices ask a colour, odd ones a size: two aspects, each balanced on its own.
    size = index % 2 == 1
    values = sorted(SIZE_SCALES) if size else list(COLORS)
    value = _balanced(values, "attribute-size" if size else "attribute", seed, index // 2)
    room = _pick(rng, _rooms_with_surfaces(spec))
    cat = _pick(rng, sorted(SMALL_OBJECTS))
    _remove(spec, lambda it: it.category != cat)  # "the cup" must name one object
    color = _pick(rng, list(COLORS)) if size else value
    obj = None
    for _ in range(10):
        obj = place_object(
            rng,
            spec,
            cat,
            color,
            _pick(rng, surfaces(spec, room)),
            scale=SIZE_SCALES[value] if size else None,
        )
        if obj is not None:
            spec.items.append(obj)
            break
    if obj is None:
        return None
    text = (
        f"Is the {cat} in the {room} big or small for a {cat}?"
        if size
        else f"What colour is the {cat} in the {room}?"
    )
    return Draft(
        text=text,
        contract=_free("option", values),
        answer=value,
        target=obj.position,
        target_room=room,
        evidence=[_object_piece(obj)],
        extra={"aspect": "size" if size else "colour"},
    )


def _location(rng: np.random.Generator, spec: HouseSpec, index: int, *, seed: int = 0) -> Draft | None:
    # Only rooms holding two kinds of surface: then the room's name leaves two answers open.
    rooms = [r for r in _rooms_with_surfaces(spec) if len({t.category for t in surfaces(spec, r)}) == 2]
    if not rooms:
        return None
    room = _pick(rng, rooms)
    kinds = sorted({t.category for t in surfaces(spec, room)})
    answer = kinds[_balanced([0, 1], "location", seed, index)]
    cat = _pick(rng, sorted(SMALL_OBJECTS))
    color = _pick(rng, list(COLORS))
    _remove(spec, lambda it: it.category != cat)
    obj = None
    for _ in range(10):
        obj = place_object(
            rng, spec, cat, color, _pick(rng, [t for t in surfaces(spec, room) if t.category == answer])
        )
        if obj is not None:
            spec.items.append(obj)
            break
    if obj is None:
        return None
    return Draft(
        text=f"Where in the {room} is the {color} {cat}?",
        contract=_free("option", sorted(f for f, v in FURNITURE.items() if v.surface)),
        answer=answer,
        target=obj.position,
        target_room=room,
        evidence=[_object_piece(obj)],
    )


def _state(rng: np.random.Generator, spec: HouseSpec, index: int, *, seed: int = 0) -> Draft | None:
    (category, states), *_ = STATES.items()
    state = _balanced(list(states), "state", seed, index)
    found = [it for it in spec.items if it.category == category]
    if not found:
        return None  # no living room in this house (or no tv stand in it): draw another
    tv = found[0]
    tv.state = state
    return Draft(
        text=f"Is the TV in the {tv.room} on or off?",
        contract=_free("option", list(states)),
        answer=state,
        target=(tv.position[0], tv.position[1], tv.size[2] * 2.65),
        target_room=tv.room,
        evidence=[
            ViewEvidence(objects=[tv.name], min_fraction=0.3, min_pixels=OBJECT_MIN_PIXELS, label="the TV")
        ],
    )


def _knowledge(rng: np.random.Generator, spec: HouseSpec, index: int, *, seed: int = 0) -> Draft | None:
    cat = _balanced(sorted(SMALL_OBJECTS), "knowledge", seed, index)
    room = _pick(rng, _rooms_with_surfaces(spec))
    top = _pick(rng, surfaces(spec, room))
    color = _pick(rng, list(COLORS))
    _remove(spec, lambda it: it.on != top.name)  # the only thing on it, so "the red thing" names one
    obj = place_object(rng, spec, cat, color, top)
    if obj is None:
        return None
    spec.items.append(obj)
    return Draft(
        text=f"What is the {color} thing on the {top.category} in the {room} used for?",
        contract=_free("option", sorted(USES.values())),
        answer=USES[cat],
        target=obj.position,
        target_room=room,
        evidence=[_object_piece(obj)],
        extra={"object": cat},
    )


def _existence(rng: np.random.Generator, spec: HouseSpec, index: int, *, seed: int = 0) -> Draft | None:
    yes = _balanced([True, False], "existence", seed, index)
    room = _pick(rng, _rooms_with_surfaces(spec))
    cat = _pick(rng, sorted(SMALL_OBJECTS))
    _remove(spec, lambda it: not (it.category == cat and it.room == room))
    tops = surfaces(spec, room)
    if yes:
        obj = _place_in_room(rng, spec, cat, _pick(rng, list(COLORS)), room)
        if obj is None:
            return None
        target, evidence = obj.position, [_object_piece(obj)]
    else:
        top = tops[0]
        target = top.position
        # To know something is absent, every place it could stand must be seen.
        evidence = [
            ViewEvidence(
                objects=[t.name], min_fraction=0.3, min_pixels=OBJECT_MIN_PIXELS, label=f"the {t.category}"
            )
            for t in tops
        ]
    return Draft(
        text=f"Is there a {cat} in the {room}?",
        contract=_free("yes_no", ["yes", "no"]),
        answer="yes" if yes else "no",
        target=target,
        target_room=room,
        evidence=evidence,
    )


def _counting(rng: np.random.Generator, spec: HouseSpec, index: int, *, seed: int = 0) -> Draft | None:
    n = _balanced([0, 1, 2, 3], "counting", seed, index)
    room = _pick(rng, _rooms_with_surfaces(spec))
    cat = _pick(rng, sorted(SMALL_OBJECTS))
    _remove(spec, lambda it: not (it.category == cat and it.room == room))
    placed = []
    for _ in range(n):
        obj = _place_in_room(rng, spec, cat, _pick(rng, list(COLORS)), room)
        if obj is None:
            return None
        placed.append(obj)
    tops = surfaces(spec, room)
    evidence: list[Any] = [_object_piece(o) for o in placed]
    if not placed:
        evidence = [ViewEvidence(objects=[t.name], min_fraction=0.3, label=f"the {t.category}") for t in tops]
    target = placed[0].position if placed else tops[0].position
    return Draft(
        text=f"How many {SMALL_OBJECTS[cat].plural} are there in the {room}?",
        contract=_free("integer"),
        answer=str(n),
        target=target,
        target_room=room,
        evidence=evidence,
    )


# ----------------------------------------------------------------------------- cognitive mapping


def _traversable_passage(
    rng: np.random.Generator, spec: HouseSpec, index: int, *, seed: int = 0
) -> Draft | None:
    slot = _balanced([0, 1, 2, 3], "traversable_passage", seed, index)
    room = _pick(rng, [r.name for r in spec.rooms])
    near = spec.neighbours(room)
    far = [r.name for r in spec.rooms if r.name != room and r.name not in near]
    if not near or len(far) < 3:
        return None
    answer = _pick(rng, near)
    wrong = [far[int(i)] for i in rng.permutation(len(far))[:3]]
    options = [*wrong[:slot], answer, *wrong[slot:]]
    door = next(d for d in spec.doors if set(d.rooms) == {room, answer})
    return Draft(
        text=f"Which of these rooms can you walk into directly from the {room}, through a doorway?",
        contract=AnswerContract(kind="option", options=options, format_hint="Answer with a room name."),
        answer=answer,
        target=(door.centre[0], door.centre[1], 0.0),
        target_room=answer,
        evidence=[_room_piece(room, answer)],
        start_room=room,
    )


BOUNDARY_OPTIONS = ["a doorway", "a solid wall", "they do not share a wall"]


def _regional_boundary(
    rng: np.random.Generator, spec: HouseSpec, index: int, *, seed: int = 0
) -> Draft | None:
    want = _balanced(list(BOUNDARY_OPTIONS), "regional_boundary", seed, index)
    walls = {(w.room, w.borders) for w in spec.walls if w.borders}
    pairs = []
    names = [r.name for r in spec.rooms]
    for ra in names:
        for rb in names:
            if ra >= rb:
                continue
            has_door = rb in spec.neighbours(ra)
            kind = BOUNDARY_OPTIONS[0 if has_door else 1 if (ra, rb) in walls else 2]
            if kind == want:
                pairs.append((ra, rb))
    if not pairs:
        return None
    a, b = pairs[int(rng.integers(len(pairs)))]
    if rng.random() < 0.5:
        a, b = b, a
    if want == BOUNDARY_OPTIONS[0]:
        door = next(d for d in spec.doors if set(d.rooms) == {a, b})
        target = (door.centre[0], door.centre[1], 0.0)
        evidence: list[Any] = [_room_piece(a, b)]
    elif want == BOUNDARY_OPTIONS[1]:
        slabs = [w for w in spec.walls if w.room == a and w.borders == b]
        x0, y0, x1, y1 = slabs[0].rect
        target = ((x0 + x1) / 2, (y0 + y1) / 2, 0.0)
        evidence = [
            AnyOf(
                options=[
                    ViewEvidence(objects=[w.name], min_fraction=0.5, min_pixels=ROOM_MIN_PIXELS)
                    for w in slabs
                ],
                label=f"the whole wall of the {a} that faces the {b}",
            ),
            _room_piece(b),
        ]
    else:
        cx, cy = spec.room(b).centre
        target = (cx, cy, 0.0)
        evidence = [_room_piece(a), _room_piece(b)]
    return Draft(
        text=f"What lies between the {a} and the {b}?",
        contract=AnswerContract(kind="option", options=list(BOUNDARY_OPTIONS)),
        answer=want,
        target=target,
        target_room=b,
        evidence=evidence,
        start_room=a,
    )


def _long_term_navigation(
    rng: np.random.Generator, spec: HouseSpec, index: int, *, seed: int = 0
) -> Draft | None:
    lengths = [n for n, w in LTN_LENGTH_WEIGHTS.items() for _ in range(w)]
    length = _balanced(lengths, "long_term_navigation", seed, index)
    start = _pick(rng, [r.name for r in spec.rooms])
    # Only goals with one doorway route: then the rooms passed do not depend on where in the
    # start room the walk begins or where in the goal room it ends.
    goals = []
    for r in spec.rooms:
        if r.name == start:
            continue
        routes = spec.routes(start, r.name)
        if len(routes) == 1 and len(routes[0]) == length:
            goals.append((r.name, routes[0]))
    if not goals:
        return None
    goal, seq = goals[int(rng.integers(len(goals)))]
    cx, cy = spec.room(goal).centre
    return Draft(
        text=(
            f"You are in the {start}. On the shortest walk from where you stand now to the middle of the "
            f"{goal}, which rooms do you pass through, in order, from the {start} to the {goal}?"
        ),
        contract=AnswerContract(
            kind="sequence",
            options=sorted(r.name for r in spec.rooms),
            format_hint=(
                "Room names in order, separated by ' | ', starting and ending with the two rooms named."
            ),
        ),
        answer=" | ".join(seq),
        target=(cx, cy, 0.0),
        target_room=goal,
        evidence=[_room_piece(r) for r in seq],
        start_room=start,
        extra={"room_sequence": seq},
    )


KINDS: dict[str, tuple[str, str, Callable[..., Draft | None]]] = {
    "object": (OPEN_FAMILY, "Object", _object),
    "existence": (OPEN_FAMILY, "Existence", _existence),
    "attribute": (OPEN_FAMILY, "Attribute", _attribute),
    "location": (OPEN_FAMILY, "Location", _location),
    "state": (OPEN_FAMILY, "State", _state),
    "knowledge": (OPEN_FAMILY, "Knowledge", _knowledge),
    "counting": (OPEN_FAMILY, "Counting", _counting),
    "traversable_passage": (MAPPING_FAMILY, "Traversable Passage", _traversable_passage),
    "regional_boundary": (MAPPING_FAMILY, "Regional Boundary", _regional_boundary),
    "long_term_navigation": (MAPPING_FAMILY, "Long-Term Navigation", _long_term_navigation),
}
"""slug -> (family, subcategory, builder). The first seven are EXPRESS-Bench's question types (its
names, in its order); the last three are ESI-Bench's Cognitive Mapping subcategories (ours to ask
in these houses)."""
EXPRESS_KINDS: tuple[str, ...] = (
    "object",
    "existence",
    "attribute",
    "location",
    "state",
    "knowledge",
    "counting",
)


START_MARGIN = 0.3
"""Metres a start position keeps inside its room's rectangle, so an agent told "you are in the
kitchen" never starts in the doorway, on the other room's side of the wall (ours)."""


def sequence_chance(n_rooms: int = 6) -> float:
    """The best a text-only reader can do on a Long-Term Navigation question: the share of
    questions whose answer is any one well-formed sequence, given :data:`LTN_LENGTH_WEIGHTS`
    (the two named rooms, and ``length - 2`` of the ``n_rooms - 2`` others between them)."""
    total = sum(LTN_LENGTH_WEIGHTS.values())
    others = max(0, n_rooms - 2)
    return max(w / total / math.perm(others, n - 2) for n, w in LTN_LENGTH_WEIGHTS.items() if n - 2 <= others)


def _start_pose(rng: np.random.Generator, spec: HouseSpec, grid: OccupancyGrid, room: str) -> Pose:
    x0, y0, x1, y1 = spec.room(room).rect
    i0, j0 = grid.cell(x0, y0)
    i1, j1 = grid.cell(x1, y1)
    ii, jj = np.nonzero(grid.navigable[i0 : i1 + 1, j0 : j1 + 1])
    m = START_MARGIN
    inside = [
        (x, y)
        for x, y in (grid.centre(int(i) + i0, int(j) + j0) for i, j in zip(ii, jj, strict=True))
        if x0 + m <= x <= x1 - m and y0 + m <= y <= y1 - m
    ]
    x, y = inside[int(rng.integers(len(inside)))]
    yaw = float(30 * int(rng.integers(12)))
    yaw = yaw - 360.0 if yaw > 180 else yaw
    return Pose(x=round(x, 3), y=round(y, 3), z=spec.camera_height, yaw=yaw, pitch=0.0)


RENAMED: dict[str, str] = {"relation": "object"}
"""Kinds asked under another name since generator version 4 (EXPRESS-Bench's names)."""


def unknown_kinds_message(unknown: list[str]) -> str:
    """One line naming the unknown kinds, the known ones, and what a renamed kind is now called."""
    hints = [f"'{k}' is now '{RENAMED[k]}'" for k in unknown if k in RENAMED]
    return f"unknown house question kinds {unknown}; kinds: {', '.join(KINDS)}" + (
        f" ({'; '.join(hints)})" if hints else ""
    )


def build_question(slug: str, seed: int, index: int, *, n_rooms: int = 6) -> Question:
    """Question ``index`` of kind ``slug`` for ``seed`` (deterministic)."""
    if slug not in KINDS:
        raise ValueError(unknown_kinds_message([slug]))
    family, subcategory, builder = KINDS[slug]
    rng = np.random.default_rng([seed, zlib.crc32(slug.encode()), index])
    for _ in range(MAX_TRIES):
        spec = generate_house(rng, n_rooms=n_rooms)
        draft = builder(rng, spec, index, seed=seed)
        if draft is None:
            continue
        draft.target = (
            round(float(draft.target[0]), 3),
            round(float(draft.target[1]), 3),
            round(float(draft.target[2]), 3),
        )
        grid = OccupancyGrid(spec)
        others = [r.name for r in spec.rooms if r.name != draft.target_room]
        start_room = draft.start_room or _pick(rng, others)
        spec.start = _start_pose(rng, spec, grid, start_room)
        shortest = grid.geodesic_distance((spec.start.x, spec.start.y), draft.target[:2])
        if not np.isfinite(shortest):
            continue
        seq = draft.extra.get("room_sequence")
        if seq is not None and grid.room_sequence((spec.start.x, spec.start.y), draft.target[:2]) != seq:
            continue  # the walk from this very pose must pass the rooms the answer names
        return Question(
            id=f"house-{slug}-s{seed}-{index:04d}",
            text=draft.text,
            contract=draft.contract,
            family=family,
            subcategory=subcategory,
            ground_truth=draft.answer,
            env_id=ENV_ID,
            benchmark="house",  # saved files keep their benchmark (its budget and rules)
            scene=spec.model_dump(mode="json"),
            metadata={
                "slug": slug,
                "reference_answer": draft.answer,
                "target": {"position": list(draft.target), "room": draft.target_room},
                "start_room": start_room,
                "shortest_path_m": round(float(shortest), 3),
                "evidence": [e.model_dump(mode="json") for e in draft.evidence],
                "generator_version": GENERATOR_VERSION,
                **draft.extra,
            },
        )
    raise RuntimeError(
        f"could not build a {slug} question for seed {seed}, index {index} in {MAX_TRIES} houses"
    )

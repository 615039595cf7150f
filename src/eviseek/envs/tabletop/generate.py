"""Deterministic question generation, question files, and the named splits.

The same seed and counts give byte-identical ``questions.jsonl`` and PNG files: every random
draw comes from a numpy ``Generator`` seeded by (seed, subcategory, index), the simulator runs in
a fixed order, floats are rounded before they are stored, and images are named by content hash.

Splits are defined by seed and count per subcategory (:data:`SPLITS`) and generated on first use
into a cache directory (``$EVISEEK_CACHE_DIR`` or ``~/.cache/eviseek``).
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from eviseek import env_ids
from eviseek.envs.split_cache import cache_root, cached_questions
from eviseek.envs.tabletop.families import TaskFamily, World, all_families, get_family
from eviseek.envs.tabletop.manipulation import Manipulator
from eviseek.envs.tabletop.scene import SceneSpec, rounded
from eviseek.envs.tabletop.sim import Frame, ProbeSim, TabletopSim
from eviseek.envs.tabletop.sim.placement import PlacementProblem, placement_problems
from eviseek.envs.tabletop.support import FrameInfo, SupportGrader
from eviseek.errors import ConfigError, SettingError
from eviseek.types import Image, Question

GENERATOR_VERSION = 11
"""Bump when generation changes in a way that changes questions (invalidates split caches)."""

ENV_ID = env_ids.TABLETOP
MAX_TRIES = 8
"""Drafts drawn per question when resampling scenes whose first view already settles it."""
MAX_SCENE_REJECTS = 16
"""Drafts the scene check (:mod:`.sim.placement`) may refuse for one question before generation
gives up with an error (a family that keeps building impossible scenes has a bug)."""


class SceneCheckError(RuntimeError):
    """A family kept drawing scenes that no real table could hold (see :mod:`.sim.placement`)."""


class SplitSpec(BaseModel):
    """A named split: its seed and how many questions per subcategory."""

    seed: int
    n_per_subcategory: int = 0
    paper_weighted: bool = False
    """Draw each subcategory in proportion to ESI-Bench's question count instead (see
    :mod:`.paper_split`); ``n_per_subcategory`` is then unused."""
    esi_forms: bool = False
    """Draw only the designs that ask ESI-Bench's own question form
    (:attr:`~.families.base.TaskFamily.esi_designs`) where a family has forms of ours too."""


SPLITS: dict[str, SplitSpec] = {
    "dev": SplitSpec(seed=1000, n_per_subcategory=2),
    "test": SplitSpec(seed=2000, n_per_subcategory=30, esi_forms=True),
    "paper": SplitSpec(seed=3000, paper_weighted=True, esi_forms=True),
}


def draft_rng(seed: int, slug: str, index: int) -> np.random.Generator:
    """The generator for question ``index`` of subcategory ``slug`` (stable across runs)."""
    return np.random.default_rng([seed, zlib.crc32(slug.encode()), index])


def question_id(slug: str, seed: int, index: int) -> str:
    """``tabletop-<slug>-s<seed>-<index>``."""
    return f"tabletop-{slug}-s{seed}-{index:04d}"


class QuestionBuilder:
    """Builds questions; holds one simulator and one probe, reused across questions."""

    def __init__(self, *, width: int = 320, height: int = 240) -> None:
        self.width = width
        self.height = height
        self._sim: TabletopSim | None = None
        self._probe: ProbeSim | None = None

    def _sim_for(self, spec: SceneSpec) -> TabletopSim:
        if self._sim is None:
            self._sim = TabletopSim(spec, width=self.width, height=self.height)
        else:
            self._sim.build(spec)
        return self._sim

    def close(self) -> None:
        """Release the simulator clients."""
        for s in (self._sim, self._probe):
            if s is not None:
                s.close()
        self._sim = self._probe = None

    def first_view_grader(
        self, family: TaskFamily, spec: SceneSpec, metadata: dict, sim: TabletopSim
    ) -> SupportGrader:
        """A grader holding the initial view alone (the sim must hold the episode's start state)."""
        return self._first_view(family, spec, metadata, sim)[0]

    def _first_view(
        self, family: TaskFamily, spec: SceneSpec, metadata: dict, sim: TabletopSim
    ) -> tuple[SupportGrader, Frame]:
        """:meth:`first_view_grader` and the frame it graded (the initial view)."""
        if self._probe is None:
            self._probe = ProbeSim(width=self.width, height=self.height)
        self._probe.load(spec)
        grader = SupportGrader(
            family.evidence(spec, metadata),
            alone=self._probe.pixels_alone,
            fov=spec.fov,
            width=self.width,
            height=self.height,
        )
        frame = sim.render(spec.camera)
        grader.add_frame(
            FrameInfo(
                frame_id=0,
                pose=spec.camera,
                segmentation=frame.segmentation,
                object_poses=sim.poses(),
                object_uids=dict(sim.uid),
            )
        )
        return grader, frame

    def initial_support(self, family: TaskFamily, spec: SceneSpec, metadata: dict, sim: TabletopSim) -> float:
        """Support grade of the initial view alone (the sim must hold the episode's start state)."""
        return self.first_view_grader(family, spec, metadata, sim).grade([0])

    def _references(self, spec: SceneSpec, sim: TabletopSim) -> tuple[list[Image], TabletopSim]:
        """The scene's reference images, each after its own changes, and a sim that holds exactly
        the stored scene again (a fresh one where a reference changed it)."""
        references = []
        for k, pose in enumerate(spec.reference_cameras):
            moves = spec.reference_changes[k] if k < len(spec.reference_changes) else []
            for change in moves:
                sim.apply_change(change)
            references.append(Image.from_array(sim.render(pose, light=spec.reference_light).rgb))
            if moves:
                sim = self._sim_for(spec)  # back to exactly the stored scene
        return references, sim

    def build(
        self,
        family: TaskFamily,
        seed: int,
        index: int,
        *,
        render_images: bool = True,
        designs: tuple[str, ...] | None = None,
    ) -> Question:
        """Question ``index`` of ``family`` for ``seed``; ``designs`` (a subset of the family's)
        replaces the cycle of designs question ``index`` draws from."""
        rng = draft_rng(seed, family.slug, index)
        tries = MAX_TRIES if family.hide_from_first_view else 1
        cycle = designs or family.designs
        want = cycle[index % len(cycle)] if cycle else None
        refused = 0
        attempt = 0
        while True:
            draft = family.draft_design(rng, want)
            spec = draft.scene
            sim = self._sim_for(spec)
            problems = placement_problems(sim, drafted=True)
            if family.settle_on_generate and not problems:
                spec = _settled(spec, sim)
                draft = draft.model_copy(update={"scene": spec})
            # From here on the sim holds exactly what an env rebuilt from the record would hold.
            sim = self._sim_for(spec)
            problems = problems or placement_problems(sim)
            references: list[Image] = []
            if render_images and not problems:
                references, sim = self._references(spec, sim)
            for change in spec.changes:
                sim.apply_change(change)
            if not problems and spec.changes:
                problems = placement_problems(sim)  # the world the episode starts in
            if problems:  # refused before any question is written: draw the scene again
                refused += 1
                _check_refusals(f"{family.slug}[{index}]", refused, problems)
                continue
            grader, first = self._first_view(family, spec, draft.metadata, sim)
            support = grader.grade([0])
            honest = family.accept_first_view(partial(grader.visibility, 0), draft.metadata)
            attempt += 1
            if (support < 1.0 and honest) or attempt >= tries:
                break
        # The graded frame is the initial view: grading renders in the probe, never in this sim.
        initial = Image.from_array(first.rgb) if render_images else None
        # Stored before ground truth: physical families run their test on this very world, and
        # simulated state (liquid) lives in the spec the sim holds.
        scene_json = spec.model_dump(mode="json")
        world = World(sim=sim, manipulator=Manipulator(sim), scene=spec, metadata=dict(draft.metadata))
        truth = family.ground_truth(world, draft)
        return Question(
            id=question_id(family.slug, seed, index),
            text=draft.text,
            contract=draft.contract,
            family=family.family,
            subcategory=family.subcategory,
            ground_truth=truth,
            guidance=draft.guidance,
            reference_images=references,
            initial_image=initial,
            env_id=ENV_ID,
            benchmark="tabletop",  # saved files keep their benchmark (its budget and rules)
            scene=scene_json,
            metadata={
                **draft.metadata,
                "slug": family.slug,
                "seed": seed,
                "index": index,
                "generator_version": GENERATOR_VERSION,
                "initial_support": support,
                "scene_check_refused": refused,
                "image_size": [self.width, self.height],
            },
        )


def _check_refusals(where: str, refused: int, problems: Sequence[PlacementProblem]) -> None:
    """Stop generating once the scene check has refused ``MAX_SCENE_REJECTS`` drafts in a row."""
    if refused >= MAX_SCENE_REJECTS:
        raise SceneCheckError(
            f"{where}: the scene check refused {refused} drafts; the last: "
            + "; ".join(p.describe() for p in problems)
        )


def _settled(spec: SceneSpec, sim: TabletopSim) -> SceneSpec:
    """``spec`` with every object where the simulator's settling left it (rounded, as stored)."""
    sim.settle()
    objects = []
    for obj in spec.objects:
        pos, orn = sim.pose_of(obj.name)
        objects.append(obj.model_copy(update={"position": rounded(pos), "orientation": rounded(orn, 7)}))
    return spec.model_copy(update={"objects": objects})


def _families(subcategories: Iterable[str] | None) -> list[TaskFamily]:
    if subcategories is None:
        return all_families()
    return [get_family(s) for s in subcategories]


def generate_questions(
    n_per_subcategory: int,
    seed: int,
    *,
    subcategories: Iterable[str] | None = None,
    width: int = 320,
    height: int = 240,
    render_images: bool = True,
    esi_forms: bool = False,
) -> list[Question]:
    """``n_per_subcategory`` questions of every (or the named) subcategory, in benchmark order;
    with ``esi_forms`` only ESI-Bench's question forms (:func:`esi_designs_of`)."""
    if n_per_subcategory < 1:
        raise ConfigError(f"n_per_subcategory must be at least 1, got {n_per_subcategory}")
    builder = QuestionBuilder(width=width, height=height)
    try:
        return [
            builder.build(fam, seed, i, render_images=render_images, designs=esi_designs_of(fam, esi_forms))
            for fam in _families(subcategories)
            for i in range(n_per_subcategory)
        ]
    finally:
        builder.close()


def esi_designs_of(family: TaskFamily, esi_forms: bool) -> tuple[str, ...] | None:
    """The designs a split draws for ``family``: its ESI-Bench forms when ``esi_forms`` and it
    has forms of ours too, else ``None`` (every design in turn)."""
    return (family.esi_designs or None) if esi_forms else None


def sample_question(
    seed: int, *, subcategories: Iterable[str] | None = None, render_images: bool = False
) -> Question:
    """One question drawn from ``seed``: the subcategory and the scene both depend on it."""
    fams = _families(subcategories)
    if not fams:
        raise ConfigError("no tabletop subcategories to sample from")
    rng = np.random.default_rng([seed, 7919])
    fam = fams[int(rng.integers(len(fams)))]
    builder = QuestionBuilder()
    try:
        return builder.build(fam, seed, 0, render_images=render_images)
    finally:
        builder.close()


def split_dir(name: str, cache_dir: str | Path | None = None) -> Path:
    """The cache directory of split ``name`` (its key covers seed, counts, version and families)."""
    if name not in SPLITS:
        raise SettingError(f"unknown split {name!r}; splits: {', '.join(SPLITS)}")
    spec = SPLITS[name]
    from eviseek.envs.tabletop.families import slugs

    key = hashlib.sha256(json.dumps([GENERATOR_VERSION, spec.model_dump(), slugs()]).encode()).hexdigest()[
        :12
    ]
    root = Path(cache_dir) if cache_dir is not None else cache_root()
    return root / "tabletop" / f"{name}-{key}"


def load_split(name: str, *, cache_dir: str | Path | None = None) -> list[Question]:
    """The questions of split ``name`` (``dev`` or ``test``), generated once and then cached."""
    target = split_dir(name, cache_dir)
    spec = SPLITS[name]
    if spec.paper_weighted:
        return cached_questions(target, lambda: generate_paper_split(spec.seed))
    return cached_questions(
        target, lambda: generate_questions(spec.n_per_subcategory, spec.seed, esi_forms=spec.esi_forms)
    )


def generate_paper_split(
    seed: int, *, width: int = 320, height: int = 240, render_images: bool = True
) -> list[Question]:
    """Every subcategory in proportion to ESI-Bench's #Q (:func:`.paper_split.paper_counts`), in
    ESI-Bench's question forms."""
    from eviseek.envs.tabletop.paper_split import paper_counts

    fams = all_families()
    counts = paper_counts(slugs=[f.slug for f in fams])
    builder = QuestionBuilder(width=width, height=height)
    try:
        return [
            builder.build(f, seed, i, render_images=render_images, designs=esi_designs_of(f, True))
            for f in fams
            for i in range(counts.get(f.slug, 0))
        ]
    finally:
        builder.close()

"""The :class:`TaskFamily` interface: what one subcategory of the tabletop benchmark must provide.

A family is one module under ``eviseek/envs/tabletop/families/`` defining one concrete subclass
of :class:`TaskFamily` named after its subcategory (``linear_alignment`` defines
``LinearAlignmentFamily``). It is discovered automatically (see ``families/__init__.py``); adding a
subcategory needs no edit anywhere else. A family:

1. ``generate(rng)`` draws a scene and question text (a :class:`TaskDraft`) from a numpy
   ``Generator``. Everything random must come from ``rng`` so generation is reproducible.
2. ``ground_truth(world, draft)`` computes the answer from the simulator, with the scene built and
   settled. Physical families run the test there (``world.manipulator`` performs the same actions
   the agent can). Geometry families read settled poses or contact distances.
3. ``evidence(scene, metadata)`` declares the decisive evidence (see :mod:`..support`); the module
   docstring must state the rule in words, and ``docs/tabletop_in_depth.md`` repeats it.
4. Declares its legal manipulation primitives (``manipulations``) and, if it needs more (pour,
   release on a ramp...), ``custom_actions`` plus ``handle_action`` to run them.
5. Uses :mod:`eviseek.answers` through the default ``parse``/``score``.

Scenes should hide the answer from the initial view: with ``hide_from_first_view`` the generator
resamples (a few times) a draft whose initial view already shows every piece of evidence.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pydantic import BaseModel, Field

from eviseek.answers import AnswerScore, normalize_answer, score_answer
from eviseek.envs.tabletop.families._common import PlacementError
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import Evidence
from eviseek.types import Action, ActionSpec, AnswerContract, Feedback, Question
from eviseek.types.taxonomy import FAMILIES

if TYPE_CHECKING:
    from eviseek.envs.tabletop.manipulation import Manipulator
    from eviseek.envs.tabletop.sim import TabletopSim

FAMILY_ORDER: tuple[str, ...] = FAMILIES
"""The paper's family order (Table 5, from :mod:`eviseek.types.taxonomy`), used to order
subcategories in splits."""


MAX_DESIGN_DRAWS = 64
"""Drafts drawn at most while looking for one of a wanted design (:attr:`TaskFamily.designs`)."""


class TaskDraft(BaseModel):
    """What a family's ``generate`` returns: a scene and the question asked about it."""

    scene: SceneSpec
    text: str
    contract: AnswerContract
    guidance: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Family facts needed later (target names, hidden axis...). Saved in ``Question.metadata``."""
    design: str | None = None
    """Which of the family's ``designs`` this draft is (the answer it was built to have); used
    only while generating, to balance answers exactly, and never saved with the question."""


@dataclass
class World:
    """The live simulator handed to ``ground_truth`` and ``handle_action``."""

    sim: TabletopSim
    manipulator: Manipulator
    scene: SceneSpec
    metadata: dict[str, Any]
    record: Callable[[], None] | None = None
    """Set by the environment while an action runs: call it to render the scene now, from the
    agent's camera, as one of the action's frames (``Observation.action_frames``). ``None`` when
    nobody watches (ground truth at generation)."""


class TaskFamily(ABC):
    """One subcategory of the benchmark. Subclass it in a module named after ``slug``."""

    family: ClassVar[str]
    """ESI-Bench family name, e.g. ``Spatial Relations``."""
    subcategory: ClassVar[str]
    """ESI-Bench subcategory name, e.g. ``Linear Alignment``."""
    slug: ClassVar[str]
    """Identifier used in question ids and file names, e.g. ``linear_alignment``."""
    manipulations: ClassVar[tuple[str, ...]] = ()
    """Built-in manipulation primitives this task allows (see :mod:`..manipulation`)."""
    hide_from_first_view: ClassVar[bool] = True
    """Resample drafts whose initial view already shows all the decisive evidence."""
    designs: ClassVar[tuple[str, ...]] = ()
    """Answer designs question ``index`` cycles through (``designs[index % len(designs)]``): the
    builder keeps drawing drafts until one has that ``design``, so a split's answers (or option
    positions) are balanced exactly instead of by coin flips, and resampling a draft whose first
    view settles it cannot tilt the balance. Empty: every first draft is taken."""
    esi_designs: ClassVar[tuple[str, ...]] = ()
    """The designs that ask ESI-Bench's own question and answer form, where the family also has
    forms of ours (kept as named extras, drawn in ``dev``). The ``paper`` and ``test`` splits draw
    only these. Empty: every design is ESI-Bench's form."""
    settle_on_generate: ClassVar[bool] = True
    """Simulate the new scene to rest before ground truth and storage (off for scenes that
    must stay as drawn, e.g. a ball held at the top of a ramp)."""

    @abstractmethod
    def generate(self, rng: np.random.Generator) -> TaskDraft:
        """Draw a scene and question. Use only ``rng`` for randomness."""

    @abstractmethod
    def ground_truth(self, world: World, draft: TaskDraft) -> str | list[str]:
        """The correct answer, computed from the (settled) simulator state."""

    @abstractmethod
    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        """The pieces of decisive evidence for this question (see the module docstring rule)."""

    def design_to_build(self, rng: np.random.Generator, design: str | None) -> str:
        """For families that build each design directly: ``design`` itself, one drawn from
        ``designs`` when it is ``None`` (the same draw their ``generate`` makes), and an error for
        a design the family does not have."""
        if design is None:
            return str(rng.choice(self.designs))
        if design not in self.designs:
            raise RuntimeError(f"{self.slug}: unknown design {design!r}")
        return design

    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        """A draft of ``design`` (any when ``None``): the first of ``generate``'s draws that has it.

        Override when the design can be built directly (many designs make redrawing wasteful).
        """
        for _ in range(MAX_DESIGN_DRAWS):
            try:
                drawn = self.generate(rng)
            except PlacementError:
                continue  # a crowded draw: the same generator, further along, draws a new scene
            if design is None or drawn.design == design:
                return drawn
        raise RuntimeError(
            f"{self.slug}: no draft of design {design!r} in {MAX_DESIGN_DRAWS} draws (a generator bug)"
        )

    def accept_first_view(
        self, visibility: Callable[[str], tuple[int, int]], metadata: dict[str, Any]
    ) -> bool:
        """Whether the first view matches what the question text says about it.

        ``visibility(name)`` gives (pixels of ``name`` visible in the first view, pixels it would
        cover with nothing in front). A draft that fails is drawn again. Default: accept.
        """
        return True

    # -- actions -------------------------------------------------------------------

    def manipulable(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[str]:
        """Objects the manipulation primitives may move (default: every movable object)."""
        return scene.movable()

    def targets(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[str]:
        """Objects that may be a ``target`` argument (default: every object)."""
        return scene.names()

    def custom_actions(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[ActionSpec]:
        """Extra task primitives (e.g. ``pour``); run by :meth:`handle_action`."""
        return []

    def handle_action(self, world: World, action: Action) -> Feedback | None:
        """Run a custom primitive; return ``None`` for names this family does not own."""
        return None

    def task_state(self, world: World) -> dict[str, Any]:
        """Extra task state merged into every manipulation's feedback (e.g. ``current_stack``)."""
        return {}

    # -- answers -------------------------------------------------------------------

    def parse(self, question: Question, raw: str | None) -> str | None:
        """The canonical answer in ``raw`` under the question's contract, or ``None``."""
        return normalize_answer(raw, question.contract)

    def score(self, question: Question, raw: str | None) -> AnswerScore:
        """Score ``raw`` against the ground truth (delegates to :mod:`eviseek.answers`)."""
        return score_answer(question, raw)

    # -- helpers for subclasses --------------------------------------------------------

    @classmethod
    def describe(cls) -> str:
        """``Family / Subcategory``."""
        return f"{cls.family} / {cls.subcategory}"

"""EviSeek's settings: paper defaults, the ablation switches and the two optional controllers."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from eviseek.envs.budget import NAVIGATION_BUDGET, TABLETOP_BUDGET

Memory = Literal["board", "recent", "uniform"]
Retention = Literal["merged", "split"]


class EviSeekConfig(BaseModel):
    """Settings of the EviSeek agent.

    The ablation switches follow the paper's section 5.4 and appendix H: ``no_demands`` plans
    subtasks straight from the question; ``no_board`` answers with Single-model memory (text
    history, current view and up to five earlier views); ``no_selective_retention`` answers from
    frames sampled uniformly over the trajectory at the same capacity; ``no_intents`` lets every
    decision execute exactly one atomic action.
    """

    model_config = ConfigDict(extra="forbid")

    budget: int = Field(TABLETOP_BUDGET, ge=1)
    """Most atomic actions per episode; every executed primitive costs one step."""
    frame_capacity: int = Field(20, ge=1)
    """Most board frames attached to the answering call."""
    max_demands: int = Field(4, ge=1, le=12)
    max_subtasks: int = Field(5, ge=1, le=20)
    max_decisions_per_subtask: int = Field(6, ge=1)
    """A subtask still open after this many seeker decisions is marked timed out."""
    temperature: float = Field(0.2, ge=0.0)
    top_p: float = Field(0.9, gt=0.0, le=1.0)
    max_tokens: int | None = Field(None, ge=1)

    # ablations
    no_demands: bool = False
    no_board: bool = False
    no_selective_retention: bool = False
    no_intents: bool = False

    # options past the paper's ESI-Bench configuration
    adaptive: bool = False
    """Adaptive seeking: a first triage call decides whether the initial view suffices."""
    coverage: bool = False
    """Coverage-driven control: after each subtask, check demand coverage; replan or stop early."""
    max_replans: int = Field(2, ge=0)
    coverage_control: bool = False
    """The navigation variant's controller (paper 5.5 and app. F): a coverage check after every
    seeker decision that added evidence, and whenever the seeker says DONE or BLOCKED, decides
    whether the active subtask is complete, whether to replan, and when to stop. The seeker's
    DONE becomes a request the controller may refuse."""

    retention: Retention = "merged"
    """Who retains evidence. ``merged`` (ours, the default so far): one keeper call after each
    intent sees up to ``keep_candidates`` of its new views and keeps some. ``split`` (the paper's
    stage prompts, app. J): the seeker's reply says whether to keep the current view, and a
    separate curator call picks intermediate frames of each executed intent's sequence."""
    guarded_answer: bool = True
    """Guarded answer context (ours; off = the paper's behaviour): when the board is empty at
    answer time, the answerer gets the most recent and the first view, labelled as unretained
    context, instead of no scene image. Recorded as a ``guarded_context`` event."""
    look_up: bool = True
    """Offer LOOK_UP, a tilt-up intent (ours; no intent of the paper's Table 8 raises the camera's
    pitch, so a scene first seen from straight above cannot be looked at from the side again
    without one). Needs a ``turn_up`` primitive; not offered otherwise."""

    memory_scope: Literal["subtask", "episode"] = "subtask"
    """How long the seeker's working memory lasts. ``subtask`` (the paper, section 4.3: "the
    transient working memory of the current subtask") drops it when a subtask closes; ``episode``
    (ours, the navigation variant's default) keeps one memory for the whole episode, so what was
    learnt of a house (rooms entered, doorways seen) survives a replan."""
    memory_lines: int = Field(8, ge=1)
    """Most working-memory lines shown to the seeker (the latest ones)."""
    coverage_views: Literal["new", "all"] = "new"
    """Which retained views the navigation controller's check sees as images: ``new`` (only those
    retained since its last check; every item's label is always shown) or ``all`` (ours, the
    navigation variant's default: evidence from several views adds up, and a view retained before
    the subtask opened still counts)."""
    coverage_walk: bool = False
    """Show the navigation controller's check what the seeker has done (its working memory) and
    the dead-reckoned pose, as the seeker itself is shown them. Ours, on in the navigation variant:
    app. F gives the check only the demands and the retained evidence, so it cannot tell a view
    through a doorway from a view taken inside the room the question names, and it ended searches
    before the agent had stood there (issue 38)."""

    skip_repeated_failures: bool = False
    """Within one intent, skip the repeats of a camera primitive that just failed (a move into a
    wall fails again, unchanged, and would still cost a step). Ours; on in the navigation variant."""

    # interface details
    track_every: int = Field(2, ge=0)
    """During APPROACH/ORBIT, ask a short visibility check after every this-many actions
    (0 disables); a lost target aborts the rest of the intent."""
    keep_candidates: int = Field(4, ge=1, le=12)
    """Most new views of one intent shown to the keeper (evenly spaced, the last always)."""
    trail_window: int = Field(12, ge=1)
    """Recent atomic actions (with feedback and pose) shown to the seeker."""
    memory_window: int = Field(5, ge=0)
    """Earlier views in the ``recent`` (Single-model) memory variant."""
    feedback_chars: int = Field(220, ge=40)
    forced_choice: bool = True
    reference_images: bool = True

    @model_validator(mode="after")
    def _one_memory_variant(self) -> EviSeekConfig:
        if self.no_board and self.no_selective_retention:
            raise ValueError(
                "no_board and no_selective_retention are two different answer memories; set at most one"
            )
        return self

    @model_validator(mode="after")
    def _one_coverage_controller(self) -> EviSeekConfig:
        if self.coverage_control and self.coverage:
            raise ValueError(
                "coverage (checks after a closed subtask) and coverage_control (the controller decides "
                "completion and stopping) are two controllers; set at most one"
            )
        if self.coverage_control and self.no_demands:
            raise ValueError("coverage_control needs evidence demands to check; drop no_demands or it")
        return self

    @property
    def memory(self) -> Memory:
        """The answer-time memory these switches select."""
        if self.no_board:
            return "recent"
        if self.no_selective_retention:
            return "uniform"
        return "board"


class EviSeekNavConfig(EviSeekConfig):
    """EviSeek's navigation variant (the paper's EXPRESS-Bench configuration, section 5.5).

    The paper states the 120-step budget and the coverage-driven control of completion, replanning
    and stopping; the intent set follows from the environment's legal actions (see
    :class:`~eviseek.agents.eviseek.intents.IntentLibrary`). The longer subtask allowance and the
    extra replan are ours: a house needs more seeker decisions per goal than a tabletop. So are a
    working memory that lasts the episode (up to 40 lines: about one per decision of a 120-step
    episode), coverage checks over every retained view, and checks that also read the seeker's
    memory and pose (``coverage_walk``); ``eviseek-nav:paper`` turns the ours off.
    """

    budget: int = Field(NAVIGATION_BUDGET, ge=1)
    coverage_control: bool = True
    max_decisions_per_subtask: int = Field(10, ge=1)
    max_replans: int = Field(3, ge=0)
    skip_repeated_failures: bool = True
    memory_scope: Literal["subtask", "episode"] = "episode"
    memory_lines: int = Field(40, ge=1)
    coverage_views: Literal["new", "all"] = "all"
    coverage_walk: bool = True

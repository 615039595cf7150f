"""What an episode page shows: the view models :func:`~eviseek.viewer.view.build_episode_view`
fills and the page template formats, and the colours subtasks are drawn in."""

from __future__ import annotations

from pydantic import BaseModel, Field

from eviseek.viewer.images import ImageRef

# Okabe-Ito colours (distinguishable with common colour-vision deficiencies) and a few more;
# green is left out on purpose because it marks frames kept on the evidence board.
SUBTASK_COLORS: tuple[str, ...] = (
    "#0072B2",
    "#E69F00",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#7F3C8D",
    "#8C564B",
    "#1F3A93",
    "#B8860B",
)
NO_SUBTASK_COLOR = "#B0B0B0"

MAX_OUTPUT_CHARS = 20_000
MAX_PROMPT_CHARS = 6_000


def subtask_color(position: int) -> str:
    """The colour of the subtask at ``position`` in plan order (cycled past the palette)."""
    return SUBTASK_COLORS[position % len(SUBTASK_COLORS)]


# ---------------------------------------------------------------------------------------------
# The page's view model.


class DemandView(BaseModel):
    """A demand with the subtasks serving it and the board items bound to it."""

    id: int
    text: str
    subtask_ids: list[int] = Field(default_factory=list)
    kept_item_ids: list[int] = Field(default_factory=list)


class SubtaskView(BaseModel):
    """A subtask with its colour, status and the steps it spent."""

    id: int
    goal: str
    status: str
    known_status: bool
    demand: int | None = None
    demand_text: str | None = None
    steps: list[int] = Field(default_factory=list)
    color: str


class FrameView(BaseModel):
    """One frame of the episode: the initial view or the view after a step."""

    frame_id: int
    step: int | None = None
    """1-based step index, ``None`` for the initial view."""
    label: str
    image: ImageRef
    action: str | None = None
    intent: str | None = None
    subtask: int | None = None
    subtask_label: str | None = None
    color: str = NO_SUBTASK_COLOR
    feedback: str | None = None
    success: bool | None = None
    pose: str | None = None
    decision: int | None = None
    kept: bool = False
    """On the final evidence board."""
    in_answer: bool = False
    """Attached to the answering call."""
    board_item_ids: list[int] = Field(default_factory=list)
    action_frames: list[ImageRef] = Field(default_factory=list)
    """Frames rendered while the step's action ran (a slide down the slope), oldest first."""
    action_frame_ids: list[int] = Field(default_factory=list)


class BoardItemView(BaseModel):
    """An evidence-board item with its provenance."""

    id: int
    frame_id: int
    step_index: int
    image: ImageRef | None = None
    intent: str | None = None
    subtask: int | None = None
    subtask_label: str | None = None
    color: str = NO_SUBTASK_COLOR
    demand: int | None = None
    demand_text: str | None = None
    note: str = ""
    outcome: str | None = None
    outcome_success: bool | None = None
    removed_at: int | None = None
    in_answer: bool = False


class BoardEventView(BaseModel):
    """One line of the board's history."""

    kind: str
    at_step: int
    item_id: int
    frame_id: int
    note: str = ""
    demand: int | None = None


class AnswerImageView(BaseModel):
    """An image attached to the answering call."""

    position: int
    frame_id: int | None
    label: str
    image: ImageRef
    kept: bool = False


class MessageView(BaseModel):
    """One message of a call's prompt, as text with image markers."""

    role: str
    text: str
    images: int = 0
    truncated: bool = False


class CallView(BaseModel):
    """One model call: stage, cost and the untrusted text that came back."""

    index: int
    stage: str
    model: str
    images_sent: int
    input_tokens: int | None
    output_tokens: int | None
    latency_s: float
    output: str
    output_truncated: bool = False
    error: str | None = None
    notes: list[str] = Field(default_factory=list)
    prompt: list[MessageView] = Field(default_factory=list)


class EventView(BaseModel):
    """A logged episode event (parse failure, fallback, replan...)."""

    kind: str
    stage: str | None
    at_step: int
    message: str
    data: str = ""


class QuestionView(BaseModel):
    """The question and its answer contract."""

    id: str
    text: str | None = None
    family: str = ""
    subcategory: str = ""
    contract_kind: str | None = None
    contract_text: str | None = None
    options: list[str] = Field(default_factory=list)
    format_hint: str = ""
    guidance: str = ""
    task_actions: list[str] = Field(default_factory=list)
    """ESI-Bench: the task's own actions as its prompt offers them (``pick up <object>``)."""
    forced_choice_prompt: str = ""
    """ESI-Bench: the task's own forced-choice prompt."""
    task_text_source: str = ""
    """ESI-Bench: the task module the text came from."""
    reference_images: list[ImageRef] = Field(default_factory=list)


class OutcomeView(BaseModel):
    """The answer against the truth, and the support grade."""

    recorded: bool
    answer: str | None = None
    raw_answer: str | None = None
    truth: str | None = None
    correct: bool | None = None
    score: float | None = None
    scored_here: bool = False
    """The run record had no verdict; the viewer scored the answer with ``eviseek.answers``."""
    support: float | None = None
    support_label: str = "not graded"
    error: str | None = None


class CostView(BaseModel):
    """Steps, calls, tokens and time."""

    steps: int
    calls: int
    input_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    total_tokens: int | None
    images_sent: int
    images_in_answer: int
    wall_time_s: float | None
    from_result: bool


class EpisodeView(BaseModel):
    """Everything an episode page shows."""

    title: str
    episode_id: str
    agent: str
    model: str
    mode: str | None
    question: QuestionView
    demands: list[DemandView] = Field(default_factory=list)
    subtasks: list[SubtaskView] = Field(default_factory=list)
    frames: list[FrameView] = Field(default_factory=list)
    board: list[BoardItemView] = Field(default_factory=list)
    board_history: list[BoardEventView] = Field(default_factory=list)
    answer_images: list[AnswerImageView] = Field(default_factory=list)
    outcome: OutcomeView
    cost: CostView
    calls: list[CallView] = Field(default_factory=list)
    events: list[EventView] = Field(default_factory=list)
    plan_json: str | None = None
    """The raw plan, shown when it did not follow the convention."""
    warnings: list[str] = Field(default_factory=list)
    """Problems the viewer found in the record (shown at the top of the page)."""
    links: list[tuple[str, str]] = Field(default_factory=list)
    """(label, relative href) pairs: the run index, the same question under other agents."""

    @property
    def kept_frame_ids(self) -> list[int]:
        """Frame ids of the frames on the final board."""
        return [f.frame_id for f in self.frames if f.kept]

    @property
    def has_plan(self) -> bool:
        """Whether the agent recorded demands or subtasks."""
        return bool(self.demands or self.subtasks)

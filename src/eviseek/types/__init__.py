"""Pydantic records shared by every part of eviseek.

Everything that is saved or sent is one of these. Images serialise by reference (a file
next to the JSON), never inline.
"""

from eviseek.types.image import Image
from eviseek.types.messages import (
    ChatMessage,
    Completion,
    ContentPart,
    GenerateConfig,
    ImagePart,
    ModelCall,
    TextPart,
    Usage,
    count_images,
)
from eviseek.types.observation import Action, ActionSpec, Feedback, Observation, Pose, StepResult
from eviseek.types.question import AnswerContract, AnswerKind, Question
from eviseek.types.stage import Stage
from eviseek.types.trajectory import (
    BoardEvent,
    EpisodeEvent,
    EpisodeResult,
    EvidenceItem,
    StepRecord,
    Trajectory,
    message_images,
)

__all__ = [
    "Action",
    "ActionSpec",
    "AnswerContract",
    "AnswerKind",
    "BoardEvent",
    "ChatMessage",
    "Completion",
    "ContentPart",
    "EpisodeEvent",
    "EpisodeResult",
    "EvidenceItem",
    "Feedback",
    "GenerateConfig",
    "Image",
    "ImagePart",
    "ModelCall",
    "Observation",
    "Pose",
    "Question",
    "Stage",
    "StepRecord",
    "StepResult",
    "TextPart",
    "Trajectory",
    "Usage",
    "count_images",
    "message_images",
]

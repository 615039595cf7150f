"""The support grader's old home: it moved to :mod:`eviseek.envs.support`, shared by the tabletop
and the house; the names stay importable from here."""

from eviseek.envs.support import (
    DEFAULT_MIN_FRACTION,
    DEFAULT_MIN_PIXELS,
    ActionEvent,
    AloneFn,
    AnyOf,
    Evidence,
    FrameInfo,
    OutcomeEvidence,
    SupportGrader,
    ViewEvidence,
)

__all__ = [
    "DEFAULT_MIN_FRACTION",
    "DEFAULT_MIN_PIXELS",
    "ActionEvent",
    "AloneFn",
    "AnyOf",
    "Evidence",
    "FrameInfo",
    "OutcomeEvidence",
    "SupportGrader",
    "ViewEvidence",
]

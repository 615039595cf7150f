"""The names of the model-call stages agents use (``GenerateConfig.stage``, ``ModelCall.stage``).

A stage says which part of an agent made a call. Agents set it on every call; the reference model
dispatches on it; the viewer and the cost tables group calls by it. Plugin agents may use other
names: the field stays a string, and :class:`Stage` members are strings too.
"""

from __future__ import annotations

from enum import Enum


class Stage(str, Enum):
    """Stage names of the built-in agents, the judge and the model check.

    Members are strings (``Stage.SEEK == "seek"``) that print as their value; written out by hand
    rather than with ``enum.StrEnum``, which needs Python 3.11 (the project supports 3.10).
    """

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    PASSIVE = "passive"
    """Passive's single answering call."""
    BLIND = "blind"
    """The blind baseline's answer from the question alone."""
    SINGLE_STEP = "single_step"
    """One Single-model turn: act or answer."""
    FORCED_CHOICE = "forced_choice"
    """A retry that asks for one of the contract's options after an unusable answer."""
    TRIAGE = "triage"
    """Adaptive EviSeek: does the first view already suffice?"""
    DEMANDS = "demands"
    """EviSeek: evidence demands from the question."""
    PLAN = "plan"
    """EviSeek: subtasks serving the demands."""
    SEEK = "seek"
    """EviSeek: the next intent for the active subtask."""
    KEEP = "keep"
    """EviSeek: which new views go on the evidence board."""
    CURATE = "curate"
    """EviSeek with split retention: which intermediate frames of an intent go on the board."""
    COVERAGE = "coverage"
    """EviSeek with coverage control: continue, replan or answer."""
    ANSWER = "answer"
    """EviSeek's answer from the board."""
    EXPLORE_CHECK = "explore_check"
    """The frontier baseline: has exploration seen enough to answer?"""
    AUTOTOOL = "autotool"
    """One turn of the AutoTool dual-mode loop."""
    JUDGE = "judge"
    """A visual-support or reward judge's call."""
    EXPRESS_JUDGE = "express_judge"
    """EXPRESS-Bench's answer judge: grounding 0/0.5/1 and score 1-5 from the last image."""
    CHECK = "check"
    """``eviseek models check``: one short request to see that a model answers."""

"""The records of acquisition intents: what the seeker is offered (:class:`IntentSpec`) and what
an intent compiled into (:class:`CompiledIntent`). The compiler is :mod:`.intents`; the records
live apart so that the stages that only read them need not see the compiler."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from eviseek.types import Action

IntentKind = Literal["viewpoint", "manipulation", "atomic"]
VIEWPOINT_INTENTS = ("FACE", "APPROACH", "GOTO", "SWEEP", "ORBIT", "RISE_TOPDOWN", "RETREAT_WIDE", "LOOK_UP")
TRACKING_INTENTS = ("APPROACH", "ORBIT")


class IntentParam(BaseModel):
    """One argument of an intent as shown to the seeker."""

    name: str
    description: str = ""
    choices: list[str] | None = None
    minimum: float | None = None
    maximum: float | None = None
    default: Any = None


class IntentSpec(BaseModel):
    """An intent on offer: its name, what it does, what it compiles to, its arguments."""

    name: str
    kind: IntentKind = "viewpoint"
    description: str = ""
    compiles_to: str = ""
    params: list[IntentParam] = Field(default_factory=list)
    tracking: bool = False
    """Target-tracking intents may be aborted when the target is lost."""

    def line(self) -> str:
        """One prompt line describing the intent and its arguments."""
        bits = []
        for p in self.params:
            if p.choices:
                rng = "|".join(p.choices)
            elif p.minimum is not None and p.maximum is not None:
                rng = f"{p.minimum:g}..{p.maximum:g}"
            else:
                rng = "text"
            shown = f"{p.default:g}" if isinstance(p.default, float) else p.default
            default = "" if p.default is None else f", default {shown}"
            bits.append(f"{p.name}: {rng}{default}")
        args = f" args {{{'; '.join(bits)}}}" if bits else ""
        how = f" [{self.compiles_to}]" if self.compiles_to else ""
        return f"{self.name}: {self.description}{how}{args}"


class CompiledIntent(BaseModel):
    """The atomic actions an intent became, and what was adjusted on the way."""

    name: str
    kind: IntentKind = "viewpoint"
    actions: list[Action]
    target: str = ""
    tracking: bool = False
    requested: int = 0
    """How many actions the intent asked for before the budget clamp."""
    notes: list[str] = Field(default_factory=list)
    """Adjustments made (a count clamped to its bound or to the budget, a default filled in)."""

    @property
    def budget_clamped(self) -> bool:
        """Whether the remaining budget cut the sequence short."""
        return len(self.actions) < self.requested


def normalize_intent_name(name: str) -> str:
    """``"rise topdown"``, ``"Rise-TopDown"`` and ``"RISE_TOPDOWN"`` all name the same intent."""
    return "_".join(str(name).replace("-", " ").replace("_", " ").upper().split())

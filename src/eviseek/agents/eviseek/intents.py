"""Acquisition intents and their compilation into atomic actions (the paper's Table 8).

An intent says *what kind* of look the seeker wants (face a bearing, close in on a target, rise
for an overhead view...). It compiles into a short, bounded sequence of the environment's atomic
actions, clamped to the remaining step budget; every compiled action is executed and costs one
step. The set on offer is derived from ``env.legal_actions()``: an intent whose primitives are
missing is not offered (a navigation-only interface has no ORBIT, RISE_TOPDOWN or RETREAT_WIDE),
SWEEP drops its tilt prefix without ``turn_down``, and counts are computed from each primitive's
``magnitude`` so a 30-degree turn quantum needs half the turns of a 15-degree one. Manipulation
commands are offered as intents of one action each.
"""

from __future__ import annotations

from typing import Any

from eviseek.agents.eviseek.intent_records import (
    TRACKING_INTENTS,
    VIEWPOINT_INTENTS,
    CompiledIntent,
    IntentKind,
    IntentParam,
    IntentSpec,
    normalize_intent_name,
)
from eviseek.types import Action, ActionSpec

__all__ = [
    "TRACKING_INTENTS",
    "VIEWPOINT_INTENTS",
    "CompiledIntent",
    "IntentKind",
    "IntentLibrary",
    "IntentParam",
    "IntentSpec",
    "normalize_intent_name",
]


def _number(args: dict[str, Any], keys: tuple[str, ...]) -> float | None:
    for key in keys:
        if key in args and args[key] is not None:
            value = args[key]
            if isinstance(value, bool):
                continue
            try:
                return float(str(value).strip().rstrip("°").replace("deg", "").strip())
            except ValueError:
                return None
    return None


class IntentLibrary:
    """The intents one environment supports, built from its legal atomic actions."""

    def __init__(self, legal: list[ActionSpec], *, atomic_only: bool = False, look_up: bool = False) -> None:
        self.look_up = look_up
        self.legal = [s for s in legal if s.kind != "control"]
        self.atomic_only = atomic_only
        self.prim = {s.name: s for s in self.legal}
        self.turn = self._mag(("turn_left", "turn_right"), 15.0)
        self.tilt = self._mag(("turn_down", "turn_up"), 15.0)
        self.move = self._mag(("move_forward",), 0.25)
        # Navigation-only interfaces (no backward/lateral moves) get longer GOTO runs, so one
        # reposition can cross a room, as the paper does for EXPRESS-Bench.
        self.nav_only = not ({"move_backward", "move_left", "move_right"} & set(self.prim))
        self.goto_cap = 12 if self.nav_only else 6
        self.max_turns = max(1, round(180.0 / self.turn))
        self.max_tilts = max(1, round(90.0 / self.tilt))
        self._specs = self._build()
        self._by_name = {normalize_intent_name(s.name): s for s in self._specs}
        # The offer is sent with every seek call; build its two forms once.
        self._dump = [s.model_dump() for s in self._specs]
        self._lines = [s.line() for s in self._specs]

    def _mag(self, names: tuple[str, ...], default: float) -> float:
        for n in names:
            spec = self.prim.get(n)
            if spec is not None and spec.magnitude:
                return float(spec.magnitude)
        return default

    def has(self, *names: str) -> bool:
        """Whether every named primitive is legal."""
        return all(n in self.prim for n in names)

    # --- the offer -----------------------------------------------------------------------------
    # Long (about 150 lines) on purpose: one block per intent, in the order the seeker is offered
    # them, each guarded by the primitives it compiles to. Kept as one flat table so that the offer's
    # order and the shared step sizes (turn, tilt, caps) read in one place; a helper per intent would
    # add indirection without removing a line.
    def _build(self) -> list[IntentSpec]:
        if self.atomic_only:
            return [
                IntentSpec(
                    name=s.name,
                    kind="manipulation" if s.kind == "manipulation" else "atomic",
                    description=s.description or "one atomic action",
                    params=[IntentParam(name=p, choices=s.choices.get(p)) for p in s.params],
                )
                for s in self.legal
            ]
        t = self.turn
        lr = ["left", "right"]
        specs: list[IntentSpec] = []
        if self.has("turn_left", "turn_right"):
            specs.append(
                IntentSpec(
                    name="FACE",
                    description="turn in place toward a bearing",
                    compiles_to="n x turn_left/right",
                    params=[
                        IntentParam(name="direction", choices=lr),
                        IntentParam(name="degrees", minimum=t, maximum=180, default=t * 2),
                    ],
                )
            )
        if self.has("move_forward"):
            specs.append(
                IntentSpec(
                    name="APPROACH",
                    description="move straight ahead toward a target in view",
                    compiles_to="k x move_forward",
                    tracking=True,
                    params=[
                        IntentParam(name="target", description="what you are approaching"),
                        IntentParam(name="steps", minimum=1, maximum=4, default=2),
                    ],
                )
            )
        if self.has("move_forward", "turn_left", "turn_right"):
            specs.append(
                IntentSpec(
                    name="GOTO",
                    description="turn toward a landmark already seen, then move to it",
                    compiles_to="[turns] + k x move_forward",
                    params=[
                        IntentParam(name="target", description="the landmark"),
                        IntentParam(name="direction", choices=["ahead", "left", "right"], default="ahead"),
                        IntentParam(name="degrees", minimum=0, maximum=180, default=0),
                        IntentParam(name="steps", minimum=1, maximum=self.goto_cap, default=3),
                    ],
                )
            )
        if self.has("turn_left", "turn_right"):
            tilt = self.has("turn_down")
            params = [
                IntentParam(name="direction", choices=lr),
                IntentParam(name="turns", minimum=1, maximum=self.max_turns, default=3),
            ]
            if tilt:
                params.append(IntentParam(name="tilt_down", choices=["true", "false"], default="false"))
            specs.append(
                IntentSpec(
                    name="SWEEP",
                    description=f"scan a fan of views, {t:g} degrees per turn",
                    compiles_to=("[turn_down] + " if tilt else "") + "n x turn_left/right",
                    params=params,
                )
            )
        if self.has("move_right", "turn_left") or self.has("move_left", "turn_right"):
            dirs = [
                d
                for d, ok in (
                    ("right", self.has("move_right", "turn_left")),
                    ("left", self.has("move_left", "turn_right")),
                )
                if ok
            ]
            specs.append(
                IntentSpec(
                    name="ORBIT",
                    description="circle sideways around a target in view to see another side",
                    compiles_to="n x (move_right, turn_left) or n x (move_left, turn_right)",
                    tracking=True,
                    params=[
                        IntentParam(name="target", description="what you are circling"),
                        IntentParam(name="direction", choices=dirs, default=dirs[0]),
                        IntentParam(name="steps", minimum=1, maximum=4, default=2),
                    ],
                )
            )
        if self.has("move_up", "turn_down"):
            specs.append(
                IntentSpec(
                    name="RISE_TOPDOWN",
                    description="rise and tilt down for an overhead view of the layout",
                    compiles_to="3 x move_up + n x turn_down",
                    params=[
                        IntentParam(
                            name="degrees", minimum=self.tilt, maximum=90, default=min(90, self.tilt * 3)
                        )
                    ],
                )
            )
        if self.look_up and self.has("turn_up"):
            # Ours (EviSeekConfig.look_up): the paper's intents only ever pitch down.
            back = self.has("move_backward")
            params = [
                IntentParam(name="degrees", minimum=self.tilt, maximum=90, default=min(90, self.tilt * 3))
            ]
            if back:
                params.append(IntentParam(name="back", minimum=0, maximum=4, default=0))
            # Lowering first matters after RISE_TOPDOWN or a high start: tilting up from there
            # still looks down on boxes, so their heights never show (Category Ambiguity).
            down = self.has("move_down")
            if down:
                params.append(IntentParam(name="down", minimum=0, maximum=4, default=0))
            specs.append(
                IntentSpec(
                    name="LOOK_UP",
                    description="tilt the camera up (coming down and backing away first if asked) to "
                    "see from the side what was seen from above",
                    compiles_to=("[j x move_down] + " if down else "")
                    + ("[k x move_backward] + " if back else "")
                    + "n x turn_up",
                    params=params,
                )
            )
        if self.has("move_backward"):
            specs.append(
                IntentSpec(
                    name="RETREAT_WIDE",
                    description="back away to fit more of the scene in view",
                    compiles_to="k x move_backward",
                    params=[IntentParam(name="steps", minimum=1, maximum=4, default=2)],
                )
            )
        for s in self.legal:
            if s.kind == "manipulation":
                specs.append(
                    IntentSpec(
                        name=s.name,
                        kind="manipulation",
                        description=s.description or "act on objects; the outcome is reported as feedback",
                        compiles_to=f"1 x {s.name}",
                        params=[IntentParam(name=p, choices=s.choices.get(p)) for p in s.params],
                    )
                )
        return specs

    def offered(self) -> list[IntentSpec]:
        """The intents this environment supports, in a stable order."""
        return list(self._specs)

    def offered_dump(self) -> list[dict[str, Any]]:
        """The offer as plain dicts (request metadata); computed once per library."""
        return self._dump

    def lines(self) -> list[str]:
        """The offer as prompt lines; computed once per library."""
        return self._lines

    def names(self) -> list[str]:
        """Names of the offered intents."""
        return [s.name for s in self._specs]

    # --- compilation ---------------------------------------------------------------------------
    def compile(
        self, name: str, args: dict[str, Any] | None, *, target: str = "", remaining: int
    ) -> tuple[CompiledIntent | None, str | None]:
        """Compile a seeker's intent into atomic actions; ``(None, why)`` for a model mistake.

        Out-of-range counts are clamped to their bounds and the sequence to ``remaining`` steps;
        each adjustment is noted on the result.
        """
        args = dict(args or {})
        spec = self._by_name.get(normalize_intent_name(name))
        if spec is None:
            return None, f"unknown intent {name!r}; offered: {', '.join(self.names())}"
        if spec.kind == "viewpoint":
            target = str(args.pop("target", "") or target or "").strip()
        else:  # a manipulation's "target" argument is the object acted on, not a tracked target
            target = str(target or "").strip()
        notes: list[str] = []
        if spec.kind in ("manipulation", "atomic"):
            actions, why = self._compile_atomic(spec, args)
        else:
            actions, why = getattr(self, f"_c_{spec.name.lower()}")(args, notes)
        if actions is None:
            return None, why
        requested = len(actions)
        if remaining < requested:
            notes.append(f"cut from {requested} to {max(0, remaining)} actions by the remaining budget")
            actions = actions[: max(0, remaining)]
        return CompiledIntent(
            name=spec.name,
            kind=spec.kind,
            actions=actions,
            target=target,
            tracking=spec.tracking and bool(target),
            requested=requested,
            notes=notes,
        ), None

    def _compile_atomic(
        self, spec: IntentSpec, args: dict[str, Any]
    ) -> tuple[list[Action] | None, str | None]:
        values: dict[str, str] = {}
        for p in spec.params:
            raw = args.get(p.name)
            if raw is None or str(raw).strip() == "":
                return None, f"{spec.name} needs {p.name!r}" + (
                    f" (one of {', '.join(p.choices)})" if p.choices else ""
                )
            text = str(raw).strip()
            if p.choices:
                match = next((c for c in p.choices if c.lower() == text.lower().replace(" ", "_")), None)
                match = match or next(
                    (c for c in p.choices if c.lower().replace("_", " ") == text.lower()), None
                )
                if match is None:
                    return (
                        None,
                        f"{spec.name}: {p.name}={text!r} is not legal; choose one of {', '.join(p.choices)}",
                    )
                text = match
            values[p.name] = text
        return [Action(name=spec.name, args=values)], None

    def _count(
        self,
        args: dict[str, Any],
        keys: tuple[str, ...],
        lo: int,
        hi: int,
        default: int,
        notes: list[str],
        label: str,
    ) -> int:
        value = _number(args, keys)
        if value is None:
            if any(k in args for k in keys):
                notes.append(f"{label} unreadable, used {default}")
            return default
        n = round(value)
        if n < lo or n > hi:
            notes.append(f"{label} {n} clamped to {min(hi, max(lo, n))}")
        return min(hi, max(lo, n))

    def _turns_for(
        self,
        args: dict[str, Any],
        default_turns: int,
        notes: list[str],
        hi: int | None = None,
        step: float | None = None,
    ) -> int:
        """A turn count from ``turns`` or from ``degrees`` divided by the turn quantum."""
        step = step or self.turn
        hi = hi or self.max_turns
        if _number(args, ("turns", "n", "count")) is not None:
            return self._count(args, ("turns", "n", "count"), 1, hi, default_turns, notes, "turns")
        deg = _number(args, ("degrees", "angle", "deg", "bearing"))
        if deg is None:
            return default_turns
        n = round(abs(deg) / step)
        if n < 1 or n > hi:
            notes.append(f"{abs(deg):g} degrees is {n} turns, clamped to {min(hi, max(1, n))}")
        return min(hi, max(1, n))

    @staticmethod
    def _direction(
        args: dict[str, Any], allowed: tuple[str, ...], default: str
    ) -> tuple[str | None, str | None]:
        raw = args.get("direction", args.get("side"))
        if raw is None or str(raw).strip() == "":
            deg = _number(args, ("degrees", "bearing", "angle"))
            if deg is not None and deg < 0 and "right" in allowed:
                return "right", None  # a negative bearing is clockwise
            return default, None
        text = str(raw).strip().lower()
        for d in allowed:
            if text == d or text.startswith(d):
                return d, None
        if text in ("clockwise", "cw") and "right" in allowed:
            return "right", None
        if text in ("counterclockwise", "anticlockwise", "ccw") and "left" in allowed:
            return "left", None
        return None, f"direction {raw!r} is not one of {', '.join(allowed)}"

    def _c_face(self, args: dict[str, Any], notes: list[str]) -> tuple[list[Action] | None, str | None]:
        d, why = self._direction(args, ("left", "right"), "left")
        if d is None:
            return None, f"FACE: {why}"
        n = self._turns_for(args, 2, notes)
        return [Action(name=f"turn_{d}")] * n, None

    def _c_approach(self, args: dict[str, Any], notes: list[str]) -> tuple[list[Action] | None, str | None]:
        k = self._count(args, ("steps", "k", "count"), 1, 4, 2, notes, "steps")
        return [Action(name="move_forward")] * k, None

    def _c_goto(self, args: dict[str, Any], notes: list[str]) -> tuple[list[Action] | None, str | None]:
        d, why = self._direction(args, ("ahead", "left", "right"), "ahead")
        if d is None:
            return None, f"GOTO: {why}"
        turns: list[Action] = []
        if d != "ahead":
            n = self._turns_for(args, 2, notes)
            turns = [Action(name=f"turn_{d}")] * n
        k = self._count(args, ("steps", "k", "distance"), 1, self.goto_cap, 3, notes, "steps")
        return [*turns, *([Action(name="move_forward")] * k)], None

    def _c_sweep(self, args: dict[str, Any], notes: list[str]) -> tuple[list[Action] | None, str | None]:
        d, why = self._direction(args, ("left", "right"), "left")
        if d is None:
            return None, f"SWEEP: {why}"
        n = self._turns_for(args, 3, notes)
        tilt = str(args.get("tilt_down", "false")).strip().lower() in ("true", "1", "yes")
        prefix: list[Action] = []
        if tilt:
            if self.has("turn_down"):
                prefix = [Action(name="turn_down")]
            else:
                notes.append("tilt_down dropped: this environment cannot pitch")
        return [*prefix, *([Action(name=f"turn_{d}")] * n)], None

    def _c_orbit(self, args: dict[str, Any], notes: list[str]) -> tuple[list[Action] | None, str | None]:
        allowed = tuple(
            d
            for d, ok in (
                ("right", self.has("move_right", "turn_left")),
                ("left", self.has("move_left", "turn_right")),
            )
            if ok
        )
        d, why = self._direction(args, allowed, allowed[0])
        if d is None:
            return None, f"ORBIT: {why}"
        n = self._count(args, ("steps", "n", "count"), 1, 4, 2, notes, "steps")
        pair = (
            [Action(name="move_right"), Action(name="turn_left")]
            if d == "right"
            else [Action(name="move_left"), Action(name="turn_right")]
        )
        return pair * n, None

    def _c_rise_topdown(
        self, args: dict[str, Any], notes: list[str]
    ) -> tuple[list[Action] | None, str | None]:
        rise = self._count(args, ("rise", "up"), 1, 4, 3, notes, "rise")
        n = self._turns_for(args, min(self.max_tilts, 3), notes, hi=self.max_tilts, step=self.tilt)
        return [*([Action(name="move_up")] * rise), *([Action(name="turn_down")] * n)], None

    def _c_retreat_wide(
        self, args: dict[str, Any], notes: list[str]
    ) -> tuple[list[Action] | None, str | None]:
        k = self._count(args, ("steps", "k", "count"), 1, 4, 2, notes, "steps")
        return [Action(name="move_backward")] * k, None

    def _c_look_up(self, args: dict[str, Any], notes: list[str]) -> tuple[list[Action] | None, str | None]:
        back = (
            self._count(args, ("back", "steps"), 0, 4, 0, notes, "back") if self.has("move_backward") else 0
        )
        down = self._count(args, ("down",), 0, 4, 0, notes, "down") if self.has("move_down") else 0
        n = self._turns_for(args, min(self.max_tilts, 3), notes, hi=self.max_tilts, step=self.tilt)
        return [
            *([Action(name="move_down")] * down),
            *([Action(name="move_backward")] * back),
            *([Action(name="turn_up")] * n),
        ], None

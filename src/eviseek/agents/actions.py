"""Read atomic actions written by a model, and describe legal actions for prompts.

Models name actions in many ways: ``move_forward``, ``"move forward"``, ``put_on(object=a,
target=b)``, ``pick_up red_cube``, ``"place red cube on top of blue box"`` or a JSON object. This
module maps all of them onto the environment's :class:`~eviseek.types.ActionSpec` list; a name
that matches no legal action is reported back (the caller logs it and falls back), while a legal
name with a wrong argument is passed through so the environment can explain the legal choices.
"""

from __future__ import annotations

import re
from typing import Any

from eviseek.types import Action, ActionSpec

_FILLER = {
    "the",
    "a",
    "an",
    "on",
    "onto",
    "top",
    "of",
    "inside",
    "into",
    "in",
    "from",
    "to",
    "with",
    "at",
    "and",
    "object",
    "target",
}
_CALL = re.compile(r"^\s*([A-Za-z_][\w ]*?)\s*\((.*)\)\s*$", re.DOTALL)


def _norm(text: str) -> str:
    return re.sub(r"[\s\-]+", "_", text.strip().lower())


def describe_action(spec: ActionSpec) -> str:
    """One prompt line for a legal action, with its arguments and their legal values."""
    head = spec.name if not spec.params else f"{spec.name}({', '.join(spec.params)})"
    bits: list[str] = []
    if spec.description:
        bits.append(spec.description)
    elif spec.magnitude is not None:
        unit = "deg" if spec.name.startswith("turn") else "m"
        bits.append(f"step {spec.magnitude:g} {unit}")
    for param in spec.params:
        choices = spec.choices.get(param)
        if choices:
            bits.append(f"{param} in {{{', '.join(choices)}}}")
    return f"{head}: {'; '.join(bits)}" if bits else head


def _match_choice(value: str, choices: list[str] | None) -> str:
    """Map a written value onto a legal choice when it clearly names one; else keep it."""
    if not choices:
        return value.strip()
    norm = _norm(value)
    for choice in choices:
        if _norm(choice) == norm:
            return choice
    hits = [c for c in choices if _norm(c) in norm or norm in _norm(c)]
    return hits[0] if len(hits) == 1 else value.strip()


def _positional(spec: ActionSpec, values: list[str]) -> dict[str, str]:
    return {p: _match_choice(v, spec.choices.get(p)) for p, v in zip(spec.params, values, strict=False)}


def _split_free_args(spec: ActionSpec, rest: str) -> list[str]:
    """Argument values from free text such as ``red cube on top of blue box``.

    Known choice names (which may contain spaces or underscores) are found first, in order of
    appearance; otherwise the words left after dropping filler words are used.
    """
    text = " " + rest.lower().replace("_", " ") + " "
    found: list[tuple[int, str]] = []
    for param in spec.params:
        for choice in spec.choices.get(param, []):
            needle = " " + choice.lower().replace("_", " ") + " "
            pos = text.find(needle)
            if pos >= 0 and all(c != choice for _, c in found):
                found.append((pos, choice))
    if found:
        return [c for _, c in sorted(found)]
    return [w for w in re.split(r"[\s,]+", rest) if w and w.lower() not in _FILLER]


def parse_action(value: Any, legal: list[ActionSpec]) -> tuple[Action | None, str | None]:
    """Map a model-written action onto a legal :class:`Action`; ``(None, why)`` when it names none."""
    by_name = {spec.name: spec for spec in legal}
    if isinstance(value, dict):
        name = str(value.get("name") or value.get("action") or value.get("command") or "")
        given = (
            value.get("args")
            or value.get("arguments")
            or {k: v for k, v in value.items() if k not in ("name", "action", "command")}
        )
        spec = by_name.get(_norm(name))
        if spec is None:
            return None, f"unknown action {name!r}"
        if isinstance(given, list):
            return Action(name=spec.name, args=_positional(spec, [str(a) for a in given])), None
        if not isinstance(given, dict):
            return Action(name=spec.name, args=_positional(spec, [str(given)])), None
        clean = {str(k): _match_choice(str(v), spec.choices.get(str(k))) for k, v in given.items()}
        return Action(name=spec.name, args=clean), None
    if not isinstance(value, str) or not value.strip():
        return None, "no action given"
    text = value.strip().strip("`\"'").strip()
    call = _CALL.match(text)
    if call:
        spec = by_name.get(_norm(call.group(1)))
        if spec is None:
            return None, f"unknown action {call.group(1)!r}"
        args: dict[str, str] = {}
        positional: list[str] = []
        for part in [p.strip() for p in call.group(2).split(",") if p.strip()]:
            if "=" in part:
                key, _, val = part.partition("=")
                key = key.strip()
                args[key] = _match_choice(val.strip().strip("\"'"), spec.choices.get(key))
            else:
                positional.append(part.strip("\"'"))
        for param, val in _positional(spec, positional).items():
            args.setdefault(param, val)
        return Action(name=spec.name, args=args), None
    norm = _norm(text)
    # Longest legal name that the text starts with ("pick_up red_cube" -> pick_up).
    for spec in sorted(legal, key=lambda s: len(s.name), reverse=True):
        if norm == spec.name or norm.startswith(spec.name + "_"):
            rest = (
                text[len(spec.name) :]
                if text.lower().startswith(spec.name)
                else _after_words(text, spec.name)
            )
            values = _split_free_args(spec, rest) if spec.params else []
            return Action(name=spec.name, args=_positional(spec, values)), None
    # Names split around their arguments: "put red cube on blue box" for put_on.
    words = [w.lower() for w in re.split(r"[\s_]+", text) if w]
    for spec in sorted(legal, key=lambda s: len(s.name), reverse=True):
        parts = spec.name.split("_")
        if not spec.params or len(parts) < 2 or not words or words[0] != parts[0]:
            continue
        pos = 1
        for part in parts[1:]:
            try:
                pos = words.index(part, pos) + 1
            except ValueError:
                break
        else:
            rest = text.split(None, 1)[1] if len(text.split(None, 1)) > 1 else ""
            return Action(name=spec.name, args=_positional(spec, _split_free_args(spec, rest))), None
    return None, f"unknown action {text[:60]!r}"


def _after_words(text: str, name: str) -> str:
    """The part of ``text`` after the words that spell ``name`` (``pick up X`` for ``pick_up``)."""
    words = text.split()
    taken = 0
    built = ""
    for word in words:
        if built == name:
            break
        built = f"{built}_{word.lower()}" if built else word.lower()
        taken += 1
    return " ".join(words[taken:])

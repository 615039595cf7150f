"""ESI-Bench's own answer rules, as a named rule set next to eviseek's.

ESI-Bench (github.com/ESI-Bench/ESI-Bench, MIT) scores each task with its own rule: each task
module first reads the model's answer (its ``parse_model_output`` hook) and then judges the final
answer (its ``score`` hook). This module re-implements both steps in our own code, per task, from
an :class:`ESIRule` that the ESI-Bench loader extracts from each record. The behaviour follows the
official code at commit 9f35528, quirks included (see ``docs/esibench.md``), and a test compares it
with the official functions on every public record when ``ESI_BENCH_ROOT`` is set.

Two entry points:

* :func:`esibench_final_answer`: what the official pipeline keeps as the answer of one model
  reply (letters mapped to categories, yes/no read from prose, counts pulled from text, ...);
* :func:`esibench_verdict`: the official verdict on a final answer: ``correct`` is ``True``,
  ``False`` or ``None`` (the official code gives ``None`` for an abstention in several tasks),
  plus the counting soft score max(0, 1 - |error| / 3).

Two rule sets use them (``Question.metadata["rules"]``):

* ``esibench:official``: the official code's rules, as above;
* ``esibench:paper`` (the default of ``esibench:PATH``, because the paper's numbers use it): the
  official rules after the paper's two answer-format normalisations (its app. A, "Answer-format
  normalization"), :func:`paper_normalise`: a ``|``-separated stacking order is read as a
  comma-separated one, and a complete navigation route is reduced to its blank positions when
  every step the prompt supplied matches and each blank maps to exactly one listed option.
  Neither looks at the ground truth.

Runs saved before the rule sets had names record ``esibench``; it means ``esibench:official``.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

OFFICIAL_RULES = "esibench:official"
"""The official code's rules."""
PAPER_RULES = "esibench:paper"
"""The official rules after the paper's app. A normalisations (the default for ESI-Bench)."""
RULE_SETS: tuple[str, ...] = (PAPER_RULES, OFFICIAL_RULES)
"""The values of ``Question.metadata["rules"]`` that select ESI-Bench's rules."""
LEGACY_RULES = "esibench"
"""What runs saved before the two rule sets recorded; read as :data:`OFFICIAL_RULES`."""
RULE_SET = PAPER_RULES
"""The rule set ESI-Bench questions load with unless told otherwise."""


def rule_set_of(name: object) -> str | None:
    """The ESI-Bench rule set ``name`` selects (``None``: not an ESI-Bench rule set)."""
    if name == LEGACY_RULES:
        return OFFICIAL_RULES
    return name if isinstance(name, str) and name in RULE_SETS else None


def saved_rule_set(metadata: dict[str, Any]) -> str | None:
    """The ESI-Bench rule set a saved question records in its ``metadata["rules"]`` (``None``:
    none). For readers below the harness (the viewer) that score a saved question without the
    benchmark registry; the harness asks the ESI-Bench benchmark's registration instead."""
    return rule_set_of(metadata.get("rules"))


_NOT_SURE = {"not sure", "unsure", "unknown"}


class ESIRule(BaseModel):
    """What one ESI-Bench question needs to be scored by the official rules (saved with it)."""

    task: str
    """ESI-Bench's task module name (``runner_task``), e.g. ``counting``."""
    truth: Any = None
    """The task's ground truth as its score hook reads it (a string, a number or a list)."""
    options: Any = None
    """Raw options where the rule uses them (cognitive map, mirror, unobserved change)."""
    choices: list[list[str]] = Field(default_factory=list)
    """Lettered choices ``[letter, category, display]`` (view hallucination, partial occlusion)."""
    labels: list[str] = Field(default_factory=list)
    """Names the rule matches against: left/right container labels (liquid volume), the two
    reference labels (dimensional size), object categories (stacking), near/far in the
    question's shuffled order (spatial distance)."""
    orders: list[list[str]] = Field(default_factory=list)
    """Accepted bottom-to-top orders (stacking)."""
    containers: list[dict[str, str]] = Field(default_factory=list)
    """Rigid containment: ``name``, ``display``, ``fit`` and ``category`` per container."""
    unique_categories: bool = False
    """Rigid containment: whether the containers' categories are all different."""
    n_objects: int = 0
    """Action order inference: 2 or 3 objects."""
    secondary: str | None = None
    """A second truth: action order inference's C side, spatial distance's far category."""
    route: list[str | None] = Field(default_factory=list)
    """Long-Term Navigation: the question's numbered steps, ``None`` where the prompt leaves a
    blank (read from the question text; used only by the paper's route reduction)."""


class ESIVerdict(BaseModel):
    """The official verdict on one final answer."""

    answer: Any
    """The answer as the score hook read it (a category, ``yes``/``no``, a count, an order...)."""
    correct: bool | None
    """``None`` where the official code scores an abstention or an unreadable answer as None."""
    soft_score: float | None = None
    """Counting only: max(0, 1 - |error| / 3) when both numbers are readable."""


# --------------------------------------------------------------------------------------------
# Text helpers, each named after the normalisation it reproduces.


def _strip(value: Any) -> str:
    """Most task modules' normaliser: ``str(value).strip()``, ``""`` for None."""
    return "" if value is None else str(value).strip()


def _squash(value: Any) -> str:
    """The shared utils' normaliser: whitespace runs collapsed to one space."""
    return "" if value is None else " ".join(str(value).strip().split())


def _category(value: Any) -> str:
    """Category form: lower case, spaces as underscores."""
    return _strip(value).lower().replace(" ", "_")


def _label(value: Any) -> str:
    return _strip(value).lower().replace("_", " ")


def _yes_no_reader(
    yes_words: set[str], no_words: set[str], no_phrases: tuple[str, ...], yes_phrases: tuple[str, ...]
) -> Any:
    """A yes/no reader: exact words first, then abstentions, then phrases (no before yes)."""

    def read(value: Any) -> str:
        text = _label(value)
        if text in yes_words:
            return "yes"
        if text in no_words:
            return "no"
        if "not sure" in text or "unsure" in text or "unknown" in text or not text:
            return "not sure"
        if any(p in text for p in no_phrases):
            return "no"
        if any(p in text for p in yes_phrases):
            return "yes"
        return "not sure"

    return read


_YES_NO_READERS = {
    "line": _yes_no_reader(
        {"yes", "y", "true", "in a line", "collinear"},
        {"no", "n", "false", "not in a line", "not collinear", "non-collinear", "non collinear"},
        ("not collinear", "not in a line"),
        ("collinear", "in a line", "straight line"),
    ),
    "touching": _yes_no_reader(
        {"yes", "y", "true", "touching", "physical contact"},
        {"no", "n", "false", "not touching", "separate", "not in contact"},
        ("not touching", "not in contact", "separate"),
        ("touching", "contact"),
    ),
    "transparent": _yes_no_reader(
        {"yes", "y", "true", "inside", "in"},
        {"no", "n", "false", "outside", "not inside", "out"},
        ("not inside", "outside"),
        ("inside",),
    ),
}

_TRIANGLES = {"equilateral", "isosceles", "random triangle"}


def _triangle(value: Any) -> str:
    text = _strip(value).lower().replace("_", " ").replace("-", " ")
    if text in _TRIANGLES:
        return text
    for word, shape in (("equilateral", "equilateral"), ("isosceles", "isosceles")):
        if word in text:
            return shape
    if "random" in text or "scalene" in text or "all three distances are different" in text:
        return "random triangle"
    return "not sure"


def _slope(value: Any) -> str:
    text = _strip(value).lower()
    if text in {"yes", "stable", "not slide", "does not slide", "will not slide", "stay stable"}:
        return "yes"
    if text in {"no", "unstable", "slide", "slides", "fallen", "falls", "will slide", "will fall"}:
        return "no"
    if "not slide" in text or "stay stable" in text or "stays stable" in text:
        return "yes"
    if "slide" in text or "fall" in text:
        return "no"
    return "unsure"


def _count_text(value: Any, allow_not_sure: bool) -> str:
    """Counting's reader: the first integer in the text, else the text itself (words stay words)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(round(value)) if value == value and abs(value) != float("inf") else ""
    text = _strip(value)
    if not text:
        return ""
    if allow_not_sure and text.lower() in {"not sure", "unsure", "unknown", "i don't know", "dont know"}:
        return "not sure"
    match = re.search(r"-?\d+", text)
    return str(int(match.group(0))) if match else text


def _agent_count(value: Any) -> int | None:
    """Agent observation's reader: a count 0-3 as a whole word, else None."""
    if value is None:
        return None
    if isinstance(value, int) and 0 <= value <= 3:
        return value
    text = _strip(value).lower()
    if text in {"", "unsure", "not sure", "unknown", "none", "null"}:
        return None
    match = re.search(r"\b([0-3])\b", text)
    return int(match.group(1)) if match else None


def _size(rule: ESIRule, value: Any) -> str:
    text = _strip(value).lower()
    if text in {"", "not sure", "unsure", "unknown", "none"}:
        return "not sure"
    for index, ref in enumerate(rule.labels[:2], start=1):
        ref = ref.lower()
        if ref and (ref in text or text in ref):
            return f"near the {rule.labels[index - 1]}"
    for index in (1, 2):
        if f"task_obj{index}" in text or f"ref_obj{index}" in text:
            return f"near the {rule.labels[index - 1]}"
    return "not sure"


def _pour_side(rule: ESIRule, value: Any) -> str | None:
    text = _label(value)
    if not text or text in _NOT_SURE:
        return None
    left, right = (label.lower() for label in rule.labels[:2])
    if "left" in text or left in text:
        return "left"
    if "right" in text or right in text:
        return "right"
    return None


def _lettered(rule: ESIRule, value: Any) -> str | None:
    """View hallucination / partial occlusion: a letter or a category name to a category."""
    by_letter = {letter.upper(): (category, display) for letter, category, display in rule.choices}
    letter = _strip(value).upper()
    text = _category(value)
    if letter in by_letter:
        return by_letter[letter][0]
    if text:
        for category, display in by_letter.values():
            if text in {_category(display), category}:
                return category
    return None


def _distance_pick(rule: ESIRule, value: Any) -> str:
    text = _category(value)
    if text in {"", "not_sure", "unsure", "unknown"}:
        return "not_sure"
    for category in rule.labels:
        norm = _category(category)
        if text == norm or text in norm or norm in text:
            return norm
    if "near" in text:
        return _category(rule.truth)
    if "far" in text:
        return _category(rule.secondary)
    return "not_sure"


def _eval_form(value: Any, options: Any) -> Any:
    """Cognitive map / mirror: a list of steps when the options are per-step lists, else text."""
    stepwise = isinstance(options, list) and bool(options) and all(isinstance(o, list) for o in options)
    if not stepwise:
        return _squash(value).lower()
    if isinstance(value, list):
        return [_squash(item).lower() for item in value if _squash(item)]
    text = _squash(value)
    if not text:
        return []
    if "|" in text:
        return [part.strip().lower() for part in text.split("|") if part.strip()]
    return [text.lower()]


def _choice_text(value: Any) -> str:
    """Unobserved change: lower case, a leading ``b)``/``b.`` letter and quotes removed."""
    text = re.sub(r"^[a-z]\s*[\).:\-]\s*", "", _squash(value).lower())
    return re.sub(r"\s+", " ", text.strip("\"' "))


def _canonical_option(value: Any, options: list[str]) -> str:
    raw = _choice_text(value)
    if not raw:
        return ""
    by_text = {_choice_text(option): option for option in options}
    if raw in by_text:
        return by_text[raw]
    for text, option in by_text.items():
        if raw == f"answer: {text}" or raw.endswith(f": {text}"):
            return option
    for text, option in by_text.items():
        if text and text in raw:
            return option
    return _squash(value)


def _stack_order(rule: ESIRule, value: Any) -> list[str] | None:
    text = _strip(value).lower()
    if not text or text.startswith("unsure") or text in {"not sure", "unknown"}:
        return None
    for prefix in ("1)", "2)", "3)", "1.", "2.", "3.", "bottom:", "middle:", "top:"):
        text = text.replace(prefix, ",")
    parts = [part.strip() for part in text.replace(";", ",").split(",") if part.strip()]
    matched = []
    for part in parts:
        for category in rule.labels:
            cat, piece = category.lower().replace("_", " "), part.lower().replace("_", " ")
            if cat in piece or piece in cat:
                matched.append(category)
                break
    return matched if len(matched) == 3 and len(set(matched)) == 3 else None


def _container(rule: ESIRule, value: Any) -> str | None:
    text = _label(value)
    if not text or text.startswith("unsure") or text in {"not sure", "unknown"}:
        return None
    by_display = {c["display"]: c["name"] for c in rule.containers}
    for display, name in sorted(by_display.items(), key=lambda item: -len(item[0])):
        norm = _label(display)
        if norm in text or text in norm:
            return name
    for c in rule.containers:
        fit, cat = _label(c["fit"]), _label(c["category"])
        if fit and fit in text:
            return c["name"]
        if cat and cat in text and rule.unique_categories:
            return c["name"]
    return None


def _action_sides(rule: ESIRule, value: Any) -> tuple[str, str | None] | None:
    if not isinstance(value, str) or not value or "unsure" in value.lower():
        return None
    found = re.findall(r"\b(left|right|above|below)\b", value.lower())
    if rule.n_objects == 2:
        return (found[0], None) if found else None
    if len(found) >= 2:
        return found[0], found[1]
    return (found[0], None) if found else None


# --------------------------------------------------------------------------------------------
# The two entry points.


def esibench_final_answer(rule: ESIRule, raw: Any) -> Any:
    """The answer the official pipeline keeps from one model reply's ``answer`` field."""
    task = rule.task
    if task in ("angle_confusion", "occlusion"):
        return _lettered(rule, raw) or "not_sure"
    if task == "distance":
        return _distance_pick(rule, raw) or "not_sure"
    if task in _YES_NO_READERS:
        return _YES_NO_READERS[task](raw)
    if task == "triangle":
        return _triangle(raw)
    if task == "slope":
        return _slope(raw)
    if task == "size":
        return _size(rule, raw)
    if task == "multiagent":
        count = _agent_count(raw)
        return count if count is not None else "unsure"
    if task == "pour":
        return _pour_side(rule, raw) or "unsure"
    if task == "counting":
        return _count_text(raw, allow_not_sure=True) or "not sure"
    if task == "deformable":
        text = _squash(raw)
        # The official reader turns an abstention into option "A" (its comment: keep a valid id).
        return "A" if text.lower() in {"", *_NOT_SURE} else text
    if task == "unobserved_changes":
        text = _squash(raw)
        return "not sure" if _choice_text(text) in {"", *_NOT_SURE} else text
    if task in ("cognitivemap", "mirror"):
        return _squash(raw) or "not sure"  # these two read with the shared utils' normaliser
    return _strip(raw) or "unsure"  # action, stacking, storage keep the text


def esibench_verdict(rule: ESIRule, answer: Any) -> ESIVerdict:
    """The official verdict on a final answer (what the task's ``score`` hook returns)."""
    task = rule.task
    if task in ("angle_confusion", "occlusion", "distance"):
        predicted = _category(answer)
        if not predicted or predicted == "not_sure":
            return ESIVerdict(answer=None, correct=None)
        return ESIVerdict(answer=predicted, correct=predicted == _category(rule.truth))
    if task in _YES_NO_READERS or task == "triangle":
        read = _triangle if task == "triangle" else _YES_NO_READERS[task]
        valid = _TRIANGLES if task == "triangle" else {"yes", "no"}
        predicted, truth = read(answer), read(rule.truth)
        decided = predicted in valid and truth in valid
        return ESIVerdict(
            answer=predicted if predicted != "not sure" else None,
            correct=predicted == truth if decided else None,
        )
    if task == "slope":
        predicted = _slope(answer)
        return ESIVerdict(answer=predicted, correct=predicted == rule.truth)
    if task == "size":
        predicted = _size(rule, answer)
        return ESIVerdict(answer=predicted, correct=predicted == _size(rule, rule.truth))
    if task == "multiagent":
        count = _agent_count(answer)
        return ESIVerdict(answer=count, correct=count == rule.truth if count is not None else None)
    if task == "pour":
        predicted, truth = _strip(answer).lower(), _strip(rule.truth).lower()
        decided = predicted in {"left", "right"} and truth in {"left", "right"}
        return ESIVerdict(
            answer=predicted if predicted in {"left", "right"} else None,
            correct=predicted == truth if decided else None,
        )
    if task == "counting":
        return _count_verdict(rule, answer)
    if task == "deformable":
        return _option_id_verdict(rule, answer)
    if task == "unobserved_changes":
        options = [str(o) for o in rule.options or []]
        predicted = _canonical_option(answer, options)
        right = bool(predicted) and _choice_text(predicted) == _choice_text(rule.truth)
        return ESIVerdict(answer=predicted or None, correct=right)
    if task in ("cognitivemap", "mirror"):
        predicted, truth = _eval_form(answer, rule.options), _eval_form(rule.truth, rule.options)
        exact = None if predicted in ("", []) or truth in ("", []) else predicted == truth
        return ESIVerdict(answer=predicted, correct=bool(exact))
    if task == "stacking":
        order = _stack_order(rule, answer)
        wanted = [[item.strip().lower() for item in gt] for gt in rule.orders]
        right = bool(order) and [item.strip().lower() for item in order or []] in wanted
        return ESIVerdict(answer=order, correct=right)
    if task == "storage":
        name = _container(rule, answer)
        truth = rule.truth or None
        return ESIVerdict(answer=name, correct=name == truth if name and truth else None)
    if task == "action":
        sides = _action_sides(rule, answer)
        right = False
        if sides is not None and sides[0].lower() == str(rule.truth).lower():
            right = rule.n_objects == 2 or (
                sides[1] is not None and sides[1].lower() == str(rule.secondary).lower()
            )
        return ESIVerdict(answer=list(sides) if sides else None, correct=right)
    raise ValueError(f"no ESI-Bench rule for task {task!r}")


def _count_verdict(rule: ESIRule, answer: Any) -> ESIVerdict:
    predicted = _count_text(answer, allow_not_sure=False)
    truth = _count_text(rule.truth, allow_not_sure=False)
    pred_n = int(predicted) if re.fullmatch(r"-?\d+", predicted or "") else None
    truth_n = int(truth) if re.fullmatch(r"-?\d+", truth or "") else None
    soft = None
    if pred_n is not None and truth_n is not None:
        soft = max(0.0, 1.0 - abs(pred_n - truth_n) / 3.0)
    return ESIVerdict(
        answer=predicted or None, correct=predicted == truth if predicted else None, soft_score=soft
    )


def _option_id_verdict(rule: ESIRule, answer: Any) -> ESIVerdict:
    said = _squash(answer).lower()
    for option_id, text in rule.choices:
        forms = {_squash(option_id).lower(), _squash(text).lower(), _squash(f"{option_id}. {text}").lower()}
        if said in forms:
            return ESIVerdict(answer=option_id, correct=option_id == rule.truth)
    # No option matched: the official compare is None == the option id, which is False.
    return ESIVerdict(answer=None, correct=False)


_ABSTAINED = {"", "not sure", "unsure", "unknown"}


def esibench_needs_forced_choice(rule: ESIRule, final: Any, stop_reason: str = "") -> bool:
    """Whether the task's own rule asks its forced-choice prompt for ``final``, the answer its
    reader kept (:func:`esibench_final_answer`). Per task as its ``needs_force_final_choice``
    decides at commit 9f35528: most ask on an abstention only; Liquid Volume on anything but
    left/right; Agent Observation on anything that is not a count 0-3; Inclined Plane never;
    Cognitive Mapping and Deformable also when the episode ran out of steps (``stop_reason``
    ``max_steps``). An answer in a wrong format that is no abstention is kept and scored as it is.
    """
    task = rule.task
    text = _squash(final)
    if task in ("cognitivemap", "deformable") and stop_reason == "max_steps":
        return True
    if task == "slope":
        return False
    if task == "action":
        return not text or "unsure" in text.lower()
    if task in ("angle_confusion", "occlusion", "distance"):
        return _category(final) in {"", "not_sure", "unknown", "unsure"}
    if task in _YES_NO_READERS or task == "triangle":
        return text.lower() == "not sure"
    if task == "counting":
        return not text or text.lower() == "not sure"
    if task == "multiagent":
        return _agent_count(final) is None
    if task == "pour":
        return text.lower() not in {"left", "right"}
    if task == "storage":
        return _label(final) in _ABSTAINED
    if task == "unobserved_changes":
        return _choice_text(final) in _ABSTAINED
    return text.lower() in _ABSTAINED


def esibench_accepted(rule: ESIRule, raw: Any, stop_reason: str = "") -> str | None:
    """The task's reading of ``raw`` as text, or ``None`` when its rule asks a forced choice
    (what decides whether an agent asks one on an ESI-Bench question)."""
    final = esibench_final_answer(rule, raw)
    if esibench_needs_forced_choice(rule, final, stop_reason):
        return None
    return _strip(final)


def esibench_score(rule: ESIRule, raw: Any, rules: str = OFFICIAL_RULES) -> ESIVerdict:
    """Read one reply the official way, then judge it: the result of answering ``raw`` under
    ``rules`` (``esibench:paper`` first applies :func:`paper_normalise`)."""
    if rule_set_of(rules) == PAPER_RULES:
        raw = paper_normalise(rule, raw)
    return esibench_verdict(rule, esibench_final_answer(rule, raw))


# --------------------------------------------------------------------------------------------
# The paper's answer-format normalisations (app. A).

# A numbered step as ESI-Bench's navigation questions write one: the number, then one of the
# step forms (so "the bathroom 1. You want..." is not taken for step 1).
_STEP = re.compile(r"(?:^|\s)(\d+)\.\s+(?=choose the next|go to|turn |\[please fill in\])", re.IGNORECASE)
_BLANK = "[please fill in]"
_ROUTE_FILLER = (
    "choose the next region to explore.",
    "choose the next region to explore",
    "choose the next turn direction.",
    "choose the next turn direction",
)


def route_steps(question: str) -> list[str | None]:
    """The numbered steps of a navigation question, ``None`` for each ``[please fill in]``.

    ``1. Choose the next region to explore. [please fill in] 2. ... corridor_0 You have reached
    the final destination.`` gives ``[None, "corridor_0"]``; ``1. Go to the bedroom 0. 2. [please
    fill in] Choose the next turn direction.`` gives ``["go to the bedroom 0", None]``. A question
    without a blank gives ``[]``.
    """
    if _BLANK not in question.lower():
        return []
    marks = list(_STEP.finditer(question))
    steps: list[str | None] = []
    for i, mark in enumerate(marks):
        if int(mark.group(1)) != len(steps) + 1:
            continue
        end = marks[i + 1].start() if i + 1 < len(marks) else len(question)
        text = question[mark.end() : end].strip()
        text = re.sub(r"you have reached the final destination\.?", "", text, flags=re.IGNORECASE).strip()
        steps.append(None if _BLANK in text.lower() else _route_text(text))
    return steps if None in steps else []


def _route_text(value: Any) -> str:
    """A route step compared loosely: case, underscores, filler words and end punctuation ignored."""
    text = _squash(value).lower().replace("_", " ")
    for filler in _ROUTE_FILLER:
        text = text.replace(filler, " ")
    text = re.sub(r"^\s*(go to|go|to)\s+(the\s+)?", "", text.strip())
    return " ".join(text.strip(" .,;:").split())


def _route_parts(raw: Any) -> list[str] | None:
    if isinstance(raw, list):
        return [str(part) for part in raw]
    if not isinstance(raw, str):
        return None
    for sep in ("|", "->", "→", ","):
        if sep in raw:
            return [part for part in raw.split(sep) if part.strip()]
    return None


def _reduce_route(rule: ESIRule, raw: Any) -> Any:
    """A complete route reduced to the blanks' answers (``a | b``), or ``raw`` unchanged."""
    parts = _route_parts(raw)
    blanks = [i for i, step in enumerate(rule.route) if step is None]
    options = rule.options if isinstance(rule.options, list) else []
    if parts is None or not blanks or len(parts) != len(rule.route) or len(options) != len(blanks):
        return raw
    picked: list[str] = []
    for i, (step, part) in enumerate(zip(rule.route, parts, strict=True)):
        said = _route_text(part)
        if step is not None:
            if said != _route_text(step):
                return raw  # a step the prompt supplied does not match: not a complete route
            continue
        listed = options[blanks.index(i)]
        listed = listed if isinstance(listed, list) else [listed]
        hits = {str(o) for o in listed if _route_text(o) == said}
        if len(hits) != 1:
            return raw
        picked.append(hits.pop())
    return " | ".join(picked)


def paper_normalise(rule: ESIRule, raw: Any) -> Any:
    """``raw`` after the paper's two answer-format normalisations (app. A); otherwise unchanged.

    * Stacking & Stability: ``a | b | c`` is read as ``a, b, c``.
    * Long-Term Navigation: a complete route (one part per numbered step, separated by ``|``,
      ``->`` or ``,``, or a list) is reduced to the parts at the blanks, joined with `` | ``,
      when every step the prompt supplied matches its part and each blank's part names exactly
      one of that blank's listed options. Anything else is left for the official reader.
    """
    if rule.task == "stacking" and isinstance(raw, str) and "|" in raw:
        return raw.replace("|", ",")
    if rule.task == "cognitivemap" and rule.route:
        return _reduce_route(rule, raw)
    return raw

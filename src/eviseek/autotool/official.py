"""The six reasoning benchmarks' own prompts and answer scorers, rewritten from their public definitions.

AutoTool's appendix A.2 runs MathVista, MathVerse, MathVision, WeMath, DynaMath and LogicVista
with each benchmark's official prompt and scorer. This module is that path, and it is the
default (dataset option ``prompt=official``); the project's dual-mode prompt with the
``<answer>`` extraction of :mod:`eviseek.autotool.reasoning` stays available as
``prompt=autotool``. Every question records which one it was asked with
(``metadata["prompt_style"]``), and the scorer follows it.

Per benchmark (the instruction sentences are the benchmarks' own: they are part of what is
being measured):

* **MathVista** - the dataset's ``query`` field when the release carries it; otherwise the same
  layout built here: ``Hint: <hint by answer type>``, ``Question: ...`` (with ``(Unit: u)``),
  ``Choices:`` and ``(A) ...`` lines. Scoring: the extracted answer is normalised as the
  official ``normalize_extracted_answer`` does (an option letter becomes its choice text, other
  text the most similar choice by edit distance; integers ``int(float(x))``; floats rounded to
  the question's precision; lists as written) and compared for exact equality.
* **MathVerse** - the ``query_cot`` field (its chain-of-thought query) when present, else the
  question. Scoring: option letters for multiple choice, else equal numbers or equal text.
* **MathVision** - its boxed instruction, the question and its options laid out as its own
  evaluation does: one ``(A) text`` line per option after the question, and no option lines when
  the options are just the letters ``A``-``E`` (the choices are then drawn in the image).
  Scoring: the content of the last ``\\boxed{}``; an option letter for option questions, else
  equal text or numbers within 1e-6.
* **WeMath** - its template (``<Thought process>: ... <Answer>: ...``) with question and
  options. Scoring: the option letter after ``<Answer>:``.
* **DynaMath** - the question and its JSON answer guide (``solution`` and ``short answer``).
  Scoring: the ``short answer`` of the JSON; floats within 0.001, a single option letter, or
  the truth contained in the text, as its evaluation does.
* **LogicVista** - the question as released (its options are inside it). Scoring: the set of
  option letters chosen, compared as a sorted string.

**Where the official pipelines call an LLM, this module uses rules.** MathVista and MathVerse
extract answers with GPT-4, MathVerse also judges equality with it, LogicVista extracts its
letters with one, and DynaMath and MathVision fall back to one when their rules fail. Here the
rules stand in: an ``<answer>`` block, an ``Answer:``/"the answer is" phrase, a ``\\boxed{}``,
else the last option letter or number. Numbers from these rules can therefore differ from the
official leaderboards on replies that only an LLM could read.
"""

from __future__ import annotations

import json
import re
from typing import Any

from eviseek.types import Question

LETTERS = "ABCDEFGH"

_MATHVISTA_HINTS = {
    "multi_choice": (
        "Please answer the question and provide the correct option letter, e.g., A, B, C, D, at the end."
    ),
    "integer": (
        "Please answer the question requiring an integer answer and provide the final value, "
        "e.g., 1, 2, 3, at the end."
    ),
    "float1": (
        "Please answer the question requiring a floating-point number with one decimal place and provide the "
        "final value, e.g., 1.2, 1.3, 1.4, at the end."
    ),
    "float2": (
        "Please answer the question requiring a floating-point number with two decimal places and provide "
        "the final value, e.g., 1.23, 1.34, 1.45, at the end."
    ),
    "list": (
        "Please answer the question requiring a Python list as an answer and provide the final list, "
        "e.g., [1, 2, 3], [1.2, 1.3, 1.4], at the end."
    ),
}

_MATHVISION_INSTRUCTION = (
    'Please solve the problem step by step and put your answer in one "\\boxed{}". '
    'If it is a multiple choice question, only one letter is allowed in the "\\boxed{}".'
)

_WEMATH_HEAD = (
    "Now, we require you to solve a multiple-choice math question. "
    "Please briefly describe your thought process and provide the final answer(option)."
)
_WEMATH_FORMAT = (
    "Regarding the format, please answer following the template below, and be sure to include two <> "
    "symbols:\n<Thought process>: <<your thought process>> <Answer>: <<your option>>"
)

_DYNAMATH_INSTRUCTIONS = {
    "multiple choice": (
        "Provide the corresponing choice option in the 'short answer' key, such as 'A', 'B', 'C', or 'D'."
    ),
    "float": (
        "Format the answer as a three-digit floating-point number and provide it in the 'short answer' key."
    ),
    "other": "Float numbers in the answer should be formatted as three-digit floating-point numbers.",
}
_DYNAMATH_GUIDE = (
    "\n## Answer Instruction Please provide an answer to the question outlined above. Your response should "
    "adhere to the following JSON format, which includes two keys: 'solution' and 'short answer'. The "
    "'solution' key can contain detailed steps needed to solve the question, and the 'short answer' key "
    "should provide a concise response. {inst}\n\nExample of expected JSON response format:\n\n"
)
_DYNAMATH_EXAMPLE = json.dumps(
    {"solution": "[Detailed step-by-step explanation]", "short answer": "[Concise Answer]"}, indent=4
)


def _meta(q: Question, key: str) -> Any:
    v = q.metadata.get(key)
    return None if v in (None, "", "nan", "None") else v


def _raw_question(q: Question) -> str:
    return str(_meta(q, "question_raw") or q.text)


def _options(q: Question) -> list[str]:
    return list(q.contract.options or _meta(q, "options") or [])


def _precision(q: Question) -> int | None:
    p = _meta(q, "precision")
    try:
        return None if p is None else int(float(p))
    except (TypeError, ValueError):
        return None


def official_prompt(q: Question) -> str:
    """The benchmark's own prompt text for one question (the image goes before it)."""
    bench = str(q.metadata.get("benchmark"))
    question, options = _raw_question(q), _options(q)
    letters = [f"({LETTERS[i]}) {o}" for i, o in enumerate(options)]
    if bench == "mathvista":
        if _meta(q, "query"):
            return str(q.metadata["query"])
        qtype, atype = str(_meta(q, "question_type") or ""), str(_meta(q, "answer_type") or "")
        if qtype == "multi_choice" or options:
            hint = _MATHVISTA_HINTS["multi_choice"]
        elif atype == "integer":
            hint = _MATHVISTA_HINTS["integer"]
        elif atype == "float":
            hint = _MATHVISTA_HINTS["float2" if _precision(q) == 2 else "float1"]
        elif atype == "list":
            hint = _MATHVISTA_HINTS["list"]
        else:
            hint = "Please answer the question and provide the final answer at the end."
        unit = f" (Unit: {_meta(q, 'unit')})" if _meta(q, "unit") else ""
        parts = [f"Hint: {hint}", f"Question: {question}{unit}"]
        if letters:
            parts.append("Choices:\n" + "\n".join(letters))
        return "\n".join(parts)
    if bench == "mathverse":
        return str(_meta(q, "query") or question)
    if bench == "mathvision":
        # MathVision's own layout: instruction, question, then one "(A) text" line per option;
        # options that are only the letters A-E name choices drawn in the image, so no lines.
        lines = "" if "".join(options) == LETTERS[: len(options)] else "".join(f"{x}\n" for x in letters)
        return f"{_MATHVISION_INSTRUCTION}\n{question}\n{lines}"
    if bench == "wemath":
        option = _meta(q, "option_text") or "; ".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(options))
        return f"{_WEMATH_HEAD}\nQuestion: {question}\nOption: {option}\n{_WEMATH_FORMAT}"
    if bench == "dynamath":
        atype = str(_meta(q, "answer_type") or ("multiple choice" if options else "other"))
        inst = _DYNAMATH_INSTRUCTIONS.get(atype, _DYNAMATH_INSTRUCTIONS["other"])
        return f"## Question\n {question}" + _DYNAMATH_GUIDE.format(inst=inst) + _DYNAMATH_EXAMPLE
    if bench == "logicvista":
        return question
    raise ValueError(f"{bench!r} is not one of the six reasoning benchmarks")


# --- answer extraction by rules (where the official pipelines ask an LLM) ---------------------

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_PHRASE = re.compile(
    r"(?:final answer|the answer is|answer\s*:|correct (?:option|answer) is)\s*[:：]?\s*(.+)", re.IGNORECASE
)
_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (nested braces kept), or ``None``."""
    starts = [m.end() for m in re.finditer(r"\\boxed\s*\{", text)]
    if not starts:
        return None
    i, depth = starts[-1], 1
    j = i
    while j < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        j += 1
    return text[i : j - 1].strip() if depth == 0 else None


def _answer_span(reply: str) -> str:
    """The part of a reply that states its final answer (the whole reply when nothing marks it)."""
    tags = _ANSWER_TAG.findall(reply)
    if tags:
        return tags[-1].strip()
    boxed = last_boxed(reply)
    if boxed is not None:
        return boxed
    phrases = _PHRASE.findall(reply)
    return phrases[-1].strip() if phrases else reply.strip()


def _letters(span: str, n_options: int) -> list[str]:
    found = re.findall(r"(?:^|[\s(\[<*])([A-H])(?=$|[\s).,:;\]>*])", span.strip())
    return [x for x in found if LETTERS.index(x) < max(1, n_options)]


def _to_number(text: str) -> float | None:
    t = text.replace(",", "").strip().rstrip(".")
    m = re.fullmatch(r"-?\d+(?:\.\d+)?(?:/\d+(?:\.\d+)?)?", t)
    if not m:
        return None
    try:
        if "/" in t:
            a, b = t.split("/", 1)
            return float(a) / float(b)
        return float(t)
    except (ValueError, ZeroDivisionError):
        return None


def _edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _truth_text(q: Question) -> str:
    """The ground truth as the benchmark writes it (choice text for MathVista's options)."""
    options = _options(q)
    truth = str(q.ground_truth)
    if q.contract.kind == "option" and options and truth in LETTERS[: len(options)]:
        return str(options[LETTERS.index(truth)])
    return str(_meta(q, "answer_text") or truth)


def _score_mathvista(reply: str, q: Question) -> tuple[bool, str | None]:
    options = _options(q)
    span = _answer_span(reply)
    if not span:
        return False, None
    pred: str | None
    if options:
        if span in options:
            pred = span
        else:
            letter = re.findall(r"\(([A-Ha-h])\)", span) or _letters(span, len(options))
            if letter and LETTERS.index(letter[-1].upper()) < len(options):
                pred = options[LETTERS.index(letter[-1].upper())]
            else:
                pred = min(options, key=lambda o: _edit_distance(span.lower(), str(o).lower()))
        return pred == _truth_text(q), pred
    atype = str(_meta(q, "answer_type") or "")
    nums = _NUMBER.findall(span)
    try:
        if atype == "integer":
            pred = str(int(float(nums[-1].replace(",", "")))) if nums else None
        elif atype == "float":
            digits = _precision(q) or 0
            pred = str(round(float(nums[-1].replace(",", "")), digits)) if nums else None
        elif atype == "list":
            lists = re.findall(r"\[[^\[\]]*\]", span)
            pred = lists[-1].replace(" ", "") if lists else None
            return pred is not None and pred == _truth_text(q).replace(" ", ""), pred
        else:
            pred = span
    except ValueError:
        pred = None
    return pred is not None and pred == _truth_text(q), pred


def _score_choice_or_value(reply: str, q: Question, *, tol: float = 1e-6) -> tuple[bool, str | None]:
    """Option letters for option questions, else equal numbers (within ``tol``) or equal text."""
    span = _answer_span(reply)
    options = _options(q)
    if q.contract.kind == "option" and options:
        letters = _letters(span, len(options))
        if not letters:
            for i, o in enumerate(options):
                if str(o).strip() and str(o).strip().lower() == span.strip().lower():
                    letters = [LETTERS[i]]
        if not letters:
            return False, None
        multi = "," in str(q.ground_truth)
        pred = ",".join(sorted(set(letters))) if multi else letters[-1]
        return set(pred.split(",")) == set(str(q.ground_truth).split(",")), pred
    truth = _truth_text(q)
    t = _to_number(truth)
    nums = _NUMBER.findall(span)
    if t is not None:
        p = _to_number(span)
        if p is None and nums:
            p = _to_number(nums[-1])
        return p is not None and abs(p - t) <= tol * max(1.0, abs(t)), None if p is None else str(p)
    norm = lambda s: re.sub(r"[\s$]+", "", s).lower().rstrip(".")  # noqa: E731
    return norm(span) == norm(truth), span


def _score_mathvision(reply: str, q: Question) -> tuple[bool, str | None]:
    boxed = last_boxed(reply)
    return _score_choice_or_value(f"\\boxed{{{boxed}}}" if boxed is not None else reply, q, tol=1e-6)


def _score_wemath(reply: str, q: Question) -> tuple[bool, str | None]:
    m = re.findall(r"<Answer>\s*:\s*<*\s*([A-H])", reply)
    if m:
        pred = m[-1]
        return pred == str(q.ground_truth), pred
    return _score_choice_or_value(reply, q)


def _score_dynamath(reply: str, q: Question) -> tuple[bool, str | None]:
    text = reply
    if 0 <= text.find("{") < text.rfind("}"):
        text = text[text.find("{") : text.rfind("}") + 1]
    text = text.replace("\\", "")
    short: str | None = None
    try:
        short = str(json.loads(text, strict=False).get("short answer"))
    except (ValueError, AttributeError):
        short = None
    atype = str(_meta(q, "answer_type") or ("multiple choice" if _options(q) else "other"))
    truth = _truth_text(q) if atype != "multiple choice" else str(q.ground_truth)
    if short is None:
        # The official evaluation asks an LLM to shorten an unparsable reply; the rules read the
        # reply's stated answer instead.
        short = _answer_span(reply)
    if atype == "float":
        word = short.split(" ")[0] if short else ""
        try:
            value = float(word.split("π")[0]) * 3.141592653589793 if "π" in word else float(word)
        except ValueError:
            return False, None
        t = _to_number(truth)
        return t is not None and abs(value - t) <= 0.001, str(value)
    if atype == "multiple choice":
        if len(short) == 1:
            pred = short.upper()
        else:
            hits = [ch for ch in "ABCDE" if ch in short.upper()]
            if len(hits) != 1:
                return False, None
            pred = hits[0]
        return pred == truth, pred
    return short.lower() in truth.lower(), short


def _score_logicvista(reply: str, q: Question) -> tuple[bool, str | None]:
    span = _answer_span(reply)
    letters = _letters(span, len(_options(q)) or len(LETTERS))
    if not letters:
        return False, None
    pred = "".join(sorted(set(x.lower() for x in letters)))
    truth = "".join(sorted(set(re.findall(r"[a-h]", str(q.ground_truth).lower()))))
    return pred == truth, pred.upper()


_SCORERS = {
    "mathvista": _score_mathvista,
    "mathverse": _score_choice_or_value,
    "mathvision": _score_mathvision,
    "wemath": _score_wemath,
    "dynamath": _score_dynamath,
    "logicvista": _score_logicvista,
}


def official_score(reply: str, q: Question) -> tuple[bool, str | None]:
    """``(correct, extracted answer)`` by the benchmark's own scoring rules (see the module docstring)."""
    bench = str(q.metadata.get("benchmark"))
    if bench not in _SCORERS:
        raise ValueError(f"{bench!r} is not one of the six reasoning benchmarks")
    return _SCORERS[bench](reply or "", q)

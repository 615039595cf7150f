"""The one extractor every agent stage uses to read a model's structured reply.

Models asked for JSON answer in many near-misses: the object wrapped in a code fence, prose
before or after it, a ``<think>`` block first, Python literals (``True``, ``None``), single
quotes, trailing commas, or a reply cut off by the token limit. :func:`extract_json` recovers a
value from all of these; :func:`parse_reply` then validates it against the stage's pydantic
reply model. Neither ever raises on bad model text: a failure comes back as
:class:`ParseResult` with ``value=None`` and an ``error`` the caller logs before applying the
stage's defined fallback.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON|python|js|javascript)?[ \t]*\n?(.*?)(```|$)", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
# Bare words that mean the same thing in JSON and Python, in both directions.
_TO_JSON = {"True": "true", "False": "false", "None": "null"}
_TO_PY = {"true": "True", "false": "False", "null": "None"}

_MAX_CHARS = 200_000
"""Replies longer than this are cut before scanning (a runaway generation is not worth parsing)."""


@dataclass
class ParseResult(Generic[T]):
    """What :func:`parse_reply` found: the validated reply, or why there is none.

    A plain dataclass rather than a pydantic model: it is never saved, and it is built on every
    model call, so it should cost nothing.
    """

    value: T | None = None
    error: str | None = None
    data: Any = None
    """The raw JSON value that was extracted (before validation), if any."""
    repaired: bool = False
    """Whether the JSON needed repair (near-JSON, truncation) to be read."""
    prose: str | None = None
    """How the answer was read from a reply without JSON (see :func:`extract_answer_text`), or
    ``None`` when the reply held JSON."""

    @property
    def ok(self) -> bool:
        """Whether a valid reply was recovered."""
        return self.value is not None


def _replace_words(text: str, table: dict[str, str], quotes: str) -> str:
    """Replace bare words from ``table`` that stand outside string literals."""
    out: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        ch = text[i]
        if quote is not None:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if ch == quote:
                quote = None
            i += 1
            continue
        if ch in quotes:
            quote = ch
            out.append(ch)
            i += 1
            continue
        if ch.isalpha():
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            out.append(table.get(word, word))
            i = j
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _single_to_double(text: str) -> str:
    """Turn single-quoted string literals into JSON double-quoted ones."""
    out: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        ch = text[i]
        if quote is None:
            if ch in "\"'":
                quote = ch
                out.append('"')
            else:
                out.append(ch)
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            # \' is legal in Python strings but not in JSON.
            out.append("'" if nxt == "'" else ch + nxt)
            i += 2
            continue
        if ch == quote:
            quote = None
            out.append('"')
        elif ch == '"' and quote == "'":
            out.append('\\"')
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _close_truncated(text: str) -> str | None:
    """Close a JSON value cut off mid-way: end an open string, drop a dangling key, close brackets.

    Returns ``None`` when the text does not look like a truncated object or array.
    """
    stack: list[str] = []
    quote: str | None = None
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if quote is not None:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack:
                return None
            stack.pop()
        i += 1
    if not stack and quote is None:
        return None
    fixed = text
    if quote is not None:
        fixed += quote
    fixed = fixed.rstrip()
    # A value that was cut right after a key or a comma cannot be completed: drop the fragment.
    fixed = re.sub(r"""[,{]\s*(["'][^"']*["']\s*:?\s*)$""", lambda m: m.group(0)[0], fixed)
    fixed = re.sub(r"[:,]\s*$", "", fixed)
    fixed = fixed.rstrip()
    return fixed + "".join(reversed(stack))


def _try_load(candidate: str) -> tuple[Any, bool] | None:
    """Read one candidate as strict JSON, then as repaired near-JSON. ``(value, repaired)``."""
    try:
        return json.loads(candidate), False
    except (json.JSONDecodeError, ValueError, RecursionError):
        pass
    repaired = _TRAILING_COMMA.sub(r"\1", candidate)
    repaired = _replace_words(repaired, _TO_JSON, "\"'")
    for attempt in (repaired, _single_to_double(repaired)):
        try:
            return json.loads(attempt), True
        except (json.JSONDecodeError, ValueError, RecursionError):
            continue
    # Python-literal syntax (single quotes, tuples) as a last resort; literal_eval runs no code.
    try:
        value = ast.literal_eval(_replace_words(candidate, _TO_PY, "\"'"))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, dict | list):
        return _jsonable(value), True
    return None


def _jsonable(value: Any) -> Any:
    """Python literals as plain JSON values (tuples to lists, keys to strings)."""
    if isinstance(value, dict):
        return {_joined_surrogates(str(k)): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if isinstance(value, str):
        return _joined_surrogates(value)
    return value


def _joined_surrogates(text: str) -> str:
    """A string as JSON would read it: a ``\\ud800\\udc00`` escape pair is one character.

    JSON joins an escaped UTF-16 surrogate pair into the character it encodes; a Python literal
    keeps two lone surrogates, which no encoder can write. A lone surrogate stays as it is.
    """
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    try:
        return text.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        return text


def _balanced_spans(text: str) -> list[str]:
    """Every top-level ``{...}`` / ``[...]`` span, in order, plus an unclosed tail if one is open."""
    spans: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] not in "{[":
            i += 1
            continue
        start = i
        depth = 0
        quote: str | None = None
        j = i
        while j < n:
            ch = text[j]
            if quote is not None:
                if ch == "\\":
                    j += 2
                    continue
                if ch == quote:
                    quote = None
            elif ch == '"' or (ch == "'" and _opens_single_quote(text, j)):
                quote = ch
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j >= n:  # never closed: keep the tail for truncation repair
            spans.append(text[start:])
            break
        spans.append(text[start : j + 1])
        i = j + 1
    return spans


def _opens_single_quote(text: str, j: int) -> bool:
    """Whether the apostrophe at ``j`` starts a quoted string rather than sitting inside a word."""
    prev = text[j - 1] if j > 0 else " "
    return not prev.isalnum()


def extract_json(text: str) -> tuple[Any, bool] | None:
    """Find the JSON object (or array) in a model reply.

    Tries, in order: the whole reply, each code-fenced block, each balanced ``{...}``/``[...]``
    span (the last complete object wins when several parse, since models often restate a draft
    before the final answer), then a truncated tail closed by :func:`_close_truncated`.
    Returns ``(value, repaired)`` or ``None`` when nothing readable is found.
    """
    if not isinstance(text, str) or not text.strip():
        return None
    text = text[:_MAX_CHARS]
    stripped = _THINK.sub("", text).strip() or text.strip()
    whole = _try_load(stripped)
    if whole is not None and isinstance(whole[0], dict | list):
        return whole
    candidates: list[str] = [m.group(1).strip() for m in _FENCE.finditer(stripped) if m.group(1).strip()]
    candidates.append(stripped)
    tails: list[str] = []
    for block in candidates:
        found: list[tuple[Any, bool]] = []
        for span in _balanced_spans(block):
            loaded = _try_load(span)
            if loaded is not None and isinstance(loaded[0], dict | list):
                found.append(loaded)
            else:
                tails.append(span)
        dicts = [f for f in found if isinstance(f[0], dict)]
        if dicts:
            return dicts[-1]
        if found:
            return found[-1]
    for tail in tails:
        closed = _close_truncated(tail)
        if closed is None:
            continue
        loaded = _try_load(closed)
        if loaded is not None and isinstance(loaded[0], dict | list):
            return loaded[0], True
    return None


# Prose forms of a final answer. Each pattern's ``span`` group is the answer; when several
# match, the one that starts last wins (a model that drafts, then corrects itself, ends with its
# final word).
_ANSWER_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("answer tag", re.compile(r"<answer>\s*(?P<span>.*?)\s*(?:</answer>|$)", re.IGNORECASE | re.DOTALL)),
    ("boxed", re.compile(r"\\boxed\{(?P<span>[^{}\n]+)\}")),
    (
        # "Answer: A", "Final answer - B", "**Final answer:** yes", "Correct answer: (C)"
        "answer label",
        re.compile(
            r"(?:^|[^\w])(?:final\s+|correct\s+)?answer\s*(?:\*\*|__)?(?:\s*[:=]|\s+-)\s*(?:\*\*|__)?[ \t]*"
            r"(?P<span>[^\n]+)",
            re.IGNORECASE,
        ),
    ),
    (
        # "The answer is (B).", "so my final answer is: yes"
        "answer is",
        re.compile(
            r"\banswer\s+(?:would\s+be|is)\s*:?\s*(?:\*\*|__)?[ \t]*(?P<span>[^\n]+?)(?:\.\s|\.?$|\n)",
            re.IGNORECASE | re.MULTILINE,
        ),
    ),
)
_LAST_LINE_WORDS = 3
"""A reply's last line is read as the answer only when it is this short ("B", "(C)", "red cube")."""
_SPAN_TAIL = re.compile(r"\s*(?:,|;|\bbecause\b|\bsince\b).*$", re.IGNORECASE | re.DOTALL)


def _clean_span(span: str) -> str:
    span = _SPAN_TAIL.sub("", span.strip())
    return span.strip().strip("*_`\"'").strip().rstrip(".").strip()


def extract_answer_text(text: str) -> tuple[str, str] | None:
    """The final answer written in prose, as ``(answer, form)``; ``None`` if there is none.

    For replies that give no JSON: ``... Answer: A``, ``The answer is (B).``,
    ``**Final answer:** yes``, ``<answer>left</answer>``, ``\\boxed{3}``, or a short last line
    such as ``B``. Only the answer's text is returned: mapping it onto the question's contract
    is :func:`eviseek.answers.normalize_answer`'s job.
    """
    if not isinstance(text, str) or not text.strip():
        return None
    body = _THINK.sub("", text[:_MAX_CHARS]).strip()
    best: tuple[int, str, str] | None = None
    for form, pattern in _ANSWER_FORMS:
        for m in pattern.finditer(body):
            span = _clean_span(m.group("span"))
            if span and (best is None or m.start("span") >= best[0]):
                best = (m.start("span"), span, form)
    if best is not None:
        return best[1], best[2]
    lines = [line for line in body.splitlines() if line.strip()]
    if len(lines) > 1:
        last = _clean_span(lines[-1].strip().lstrip("#>-* ").strip())
        if last and not last.endswith("?") and len(last.split()) <= _LAST_LINE_WORDS:
            return last, "last line"
    return None


def _answer_only(model_cls: type[BaseModel]) -> bool:
    """Whether ``model_cls`` is an answer reply: ``answer`` is its only required field."""
    required = [name for name, f in model_cls.model_fields.items() if f.is_required()]
    return required == ["answer"]


@cache
def schema_of(model_cls: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a reply model (computed once per class)."""
    return model_cls.model_json_schema()


def parse_reply(text: str, model_cls: type[T]) -> ParseResult[T]:
    """Extract and validate a stage reply; never raises on bad model output.

    An answer reply (``answer`` its only required field) written in prose without JSON is read
    with :func:`extract_answer_text`; ``ParseResult.prose`` then says which form was found.
    A bare JSON array is accepted for reply models that declare a ``_list_field`` class
    attribute naming the field it should fill (e.g. a list of demands).
    """
    try:
        found = extract_json(text)
    except RecursionError:  # pathological nesting: treat as unreadable
        found = None
    if found is None:
        head = (text or "").strip().replace("\n", " ")[:120]
        error = f"no JSON object found in reply {head!r}"
        prose = extract_answer_text(text) if _answer_only(model_cls) else None
        if prose is not None:
            try:
                value = model_cls.model_validate({"answer": prose[0]})
            except ValidationError:
                return ParseResult(error=error)
            return ParseResult(value=value, data={"answer": prose[0]}, prose=prose[1])
        return ParseResult(error=error)
    data, repaired = found
    list_field = getattr(model_cls, "_list_field", None)
    if isinstance(data, list):
        if isinstance(list_field, str):
            data = {list_field: data}
        elif len(data) == 1 and isinstance(data[0], dict):
            data = data[0]
        else:
            return ParseResult(
                error="reply is a JSON array where an object was expected", data=data, repaired=repaired
            )
    try:
        value = model_cls.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {err['msg']}" for err in exc.errors()[:3]
        )
        return ParseResult(error=f"reply does not fit the schema ({problems})", data=data)
    return ParseResult(value=value, data=data, repaired=repaired)

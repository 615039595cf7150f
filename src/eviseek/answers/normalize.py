"""Turn free-form model answers into canonical values for each kind of answer contract.

Every function here is total: it returns ``None`` for text it cannot read rather than raising,
because model output is untrusted and a missing answer is simply scored as incorrect.
"""

from __future__ import annotations

import re
import unicodedata

from eviseek.types import AnswerContract

_PUNCT = re.compile(r"[^\w\s|]", re.UNICODE)
_SPACES = re.compile(r"\s+")
_PREFIX = re.compile(r"^\s*(?:final\s+answer|the\s+answer\s+is|answer|prediction)\s*[:\-]?\s*", re.IGNORECASE)
_TAGGED = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.IGNORECASE | re.DOTALL)

_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORDS["none"] = 0
_NUMBER_WORDS["no"] = 0


def normalize_text(text: str) -> str:
    """Lower-case, unify underscores/hyphens with spaces, drop punctuation, collapse spaces."""
    text = unicodedata.normalize("NFKC", text).lower().replace("_", " ").replace("-", " ")
    text = _PUNCT.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def strip_wrappers(text: str) -> str:
    """Remove ``<answer>`` tags, an ``Answer:`` prefix, quotes and a trailing full stop."""
    tagged = _TAGGED.findall(text)
    if tagged:
        text = tagged[-1]
    text = _PREFIX.sub("", text.strip())
    return text.strip().strip("\"'`*").strip().rstrip(".").strip()


def match_option(text: str | None, options: list[str]) -> str | None:
    """Map an answer to one of ``options`` (returned verbatim), or ``None`` if it maps to none.

    Accepts the option text (case, punctuation and ``_`` vs space ignored), an option letter
    (``B``, ``(B)``, ``B.``, ``option b``), or a longer reply that mentions exactly one option.
    """
    if text is None or not options:
        return None
    raw = strip_wrappers(text)
    norm = normalize_text(raw)
    by_norm = {normalize_text(o): o for o in options}
    if norm in by_norm:
        return by_norm[norm]
    # An option letter needs a delimiter ("B", "(B)", "B.", "B: ...") so "A red cube" stays prose.
    letter = re.fullmatch(
        r"\(?\s*(?:option\s+)?([a-z])\s*(?:[\).:]\s*(.*)|\s*)", raw.strip().lower(), re.DOTALL
    )
    if letter:
        idx = ord(letter.group(1)) - ord("a")
        if not 0 <= idx < len(options):
            return None
        rest = normalize_text(letter.group(2) or "")
        if rest and rest != normalize_text(options[idx]):
            return None  # "B) red cube" when B is not red cube: contradictory
        return options[idx]
    # A sentence naming exactly one option as whole words.
    padded = f" {norm} "
    hits = [o for n, o in by_norm.items() if n and f" {n} " in padded]
    if len(hits) > 1:
        # Prefer the longest when one hit contains another ("light blue" vs "blue").
        hits.sort(key=lambda o: len(normalize_text(o)), reverse=True)
        longest = normalize_text(hits[0])
        if all(normalize_text(h) in longest for h in hits[1:]):
            return hits[0]
        return None
    return hits[0] if hits else None


def parse_yes_no(text: str | None) -> str | None:
    """``"yes"`` or ``"no"`` from a reply, or ``None`` when it says neither (or both)."""
    if text is None:
        return None
    tokens = normalize_text(strip_wrappers(text)).split()
    if tokens and tokens[0] in ("yes", "no"):
        return tokens[0]  # "No, it is not visible" starts with its verdict
    words = set(tokens)
    yes = bool(words & {"yes", "true", "y"})
    no = bool(words & {"no", "false", "n"})
    if yes == no:
        return None
    return "yes" if yes else "no"


def parse_integer(text: str | None) -> int | None:
    """The first integer in a reply (digits or a number word up to twenty)."""
    if text is None:
        return None
    body = strip_wrappers(text)
    m = re.search(r"-?\d+", body)
    if m:
        return int(m.group())
    for word in normalize_text(body).split():
        if word in _NUMBER_WORDS:
            return _NUMBER_WORDS[word]
    return None


_SEQ_SPLIT = re.compile(r"\s*(?:\||,|;|->|=>|>|\bthen\b|\n)\s*", re.IGNORECASE)


def parse_sequence(text: str | None, vocabulary: list[str] | None = None) -> list[str] | None:
    """An ordered list of names from ``a | b | c``, ``a, b, c``, ``a -> b`` and similar.

    With a ``vocabulary`` each item is mapped to a vocabulary entry (``None`` if any item maps to
    none); without one, items are normalised text.
    """
    if text is None:
        return None
    body = strip_wrappers(text)
    body = re.sub(r"^\s*\[|\]\s*$", "", body)
    items = [i for i in (s.strip().strip("'\"") for s in _SEQ_SPLIT.split(body)) if i]
    if not items:
        return None
    if vocabulary is None:
        return [normalize_text(i) for i in items]
    mapped = [match_option(i, vocabulary) for i in items]
    if any(m is None for m in mapped):
        return None
    return [m for m in mapped if m is not None]


def normalize_answer(text: str | None, contract: AnswerContract) -> str | None:
    """The canonical answer string for ``contract``, or ``None`` when the reply is unreadable.

    Options map to the option text; yes/no to ``yes``/``no``; integers to their decimal form;
    sequences to ``a|b|c`` of normalised (or option-mapped) names; free text to normalised text.
    """
    if text is None:
        return None
    if contract.kind == "option":
        return match_option(text, contract.options or [])
    if contract.kind == "yes_no":
        if contract.options:
            hit = match_option(text, contract.options)
            if hit is not None:
                return normalize_text(hit)
        return parse_yes_no(text)
    if contract.kind == "integer":
        value = parse_integer(text)
        return None if value is None else str(value)
    if contract.kind == "sequence":
        seq = parse_sequence(text, contract.options)
        return None if seq is None else "|".join(normalize_text(s) for s in seq)
    norm = normalize_text(strip_wrappers(text))
    return norm or None

"""Predictions in odd formats for one ESI-Bench record: the forms models really produce."""

from __future__ import annotations

import json
from typing import Any

_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def _texts(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    return [str(value)]


def odd_predictions(row: dict[str, Any]) -> list[Any]:
    """Answers to try for ``row``: every option and the truth, dressed up in many ways."""
    options = json.loads(row["options_json"]) if row.get("options_json") else []
    seeds = _texts(options) + _texts(row.get("answer"))
    if isinstance(options, list):
        seeds += [o.get("text", "") for o in options if isinstance(o, dict)]
    out: list[Any] = [
        None,
        "",
        "not sure",
        "Not Sure",
        "unsure",
        "unknown",
        "I don't know",
        "A",
        "B",
        "(b)",
        "c.",
        "D) something",
        "left",
        "right",
        "above",
        "below",
        "yes",
        "No.",
        "true",
        "equilateral",
        "an isosceles triangle",
        "it will slide",
        "stays stable",
        "0",
        "3",
        "7",
        "three",
        "two objects",
        "-1",
        "4.0",
        "The answer is 2",
        "near",
        "far",
        "collinear",
        "not touching",
        "inside",
        "outside",
        "left; right",
        "right left",
    ]
    for text in dict.fromkeys(s for s in seeds if s):
        spaced = text.replace("_", " ")
        out += [
            text,
            text.upper(),
            f"  {text}  ",
            spaced,
            spaced.title(),
            f"Answer: {text}",
            f"the {spaced}.",
            f'{{"answer": "{text}"}}',
            f"I think it is the {spaced}, definitely.",
            f"B. {text}",
            text.replace(" ", "_"),
            f"{text} | {text}",
        ]
        if text.isdigit() and int(text) < len(_WORDS):
            out += [_WORDS[int(text)], f"There are {_WORDS[int(text)]} of them", f"{text} objects"]
    items = [t for t in _texts(options) if t]
    if len(items) >= 3:
        out += [
            ", ".join(items[:3]),
            " | ".join(items[:3]),
            "bottom: " + ", middle: ".join(items[:2]) + ", top: " + items[2],
            "\n".join(items[:3]),
            "1) " + " 2) ".join(items[:3]),
            ", ".join(reversed(items[:3])),
        ]
    return out

"""The fidelity page's table keeps its own rule.

The page says: where the paper states a setting eviseek follows it by default, and anything else
is labelled *ours*. A row whose default leaves the paper's setting off (the thinking budget of
512 was "off unless given") must therefore say "ours"; every row has the table's six cells (a
stray ``|`` inside a cell would shift the columns).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "fidelity.md"
HEADER = ["area", "the paper", "ours (where different or unstated)", "default", "the switch", "details"]


def _cells(line: str) -> list[str]:
    # Split on pipes outside code spans (a switch may show `a|b|c` alternatives).
    parts, current, in_code = [], "", False
    for ch in line.strip().strip("|"):
        if ch == "`":
            in_code = not in_code
        if ch == "|" and not in_code:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    return [*parts, current.strip()]


def _rows(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("|")]
    assert _cells(lines[0]) == HEADER, _cells(lines[0])
    return [_cells(line) for line in lines[2:]]


def _contradictions(rows: list[list[str]]) -> list[str]:
    """Rows whose default leaves a setting the paper states off without calling that ours."""
    bad = []
    for area, paper, _ours, default, _switch, _details in rows:
        leaves_off = re.search(r"\b(off|not sent|none)\b", default) is not None
        if paper and leaves_off and not default.startswith("ours"):
            bad.append(area)
    return bad


def test_every_row_has_the_six_columns() -> None:
    rows = _rows(PAGE.read_text(encoding="utf-8"))
    assert rows and all(len(r) == len(HEADER) for r in rows), [r[0] for r in rows if len(r) != len(HEADER)]


def test_no_row_contradicts_the_page_rule() -> None:
    assert _contradictions(_rows(PAGE.read_text(encoding="utf-8"))) == []


def test_the_rule_check_catches_the_old_thinking_budget_row() -> None:
    old = (
        "| Gemini thinking | thinking budget 512 (app. A) | | off unless given "
        "| `--model-arg thinking_budget=512` | x |"
    )
    assert _contradictions([_cells(old)]) == ["Gemini thinking"]

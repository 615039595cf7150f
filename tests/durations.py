"""Slowest files first: the order in which ``scripts/test.sh`` hands whole test files to xdist.

xdist (``--dist loadfile``) gives each worker one file at a time. By default it hands out the files
with the most tests first, so a slow file with few tests (a docs build, a learning run) tends to
start last and leaves the other core idle at the end. ``--slowest-files-first`` (tests/conftest.py)
orders the files by the seconds recorded in ``durations.json`` instead, longest first; files not
listed there follow, those with more tests first. test.sh adds ``--no-loadscope-reorder`` so that
xdist keeps this order. Stale numbers only make the balance worse, never a test's outcome.
tests/train/test_verl_autotool.py is left out on purpose: its tests wait for the background
``setup_verl.sh``, so it should start late, not first.

Refresh the numbers from one full run::

    pytest -q -n 2 --dist loadfile --durations=0 --durations-min=0.5 | python -m tests.durations
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

FILE = Path(__file__).with_name("durations.json")
# One line of pytest's "slowest durations" table: "12.34s call     tests/a/test_b.py::test_c[x]".
LINE = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s+(?:setup|call|teardown)\s+([^\s:]+\.py)::")


def recorded() -> dict[str, float]:
    """Seconds per test file, as last recorded (setup, call and teardown summed)."""
    return json.loads(FILE.read_text()) if FILE.exists() else {}


def order_slowest_first(items: list[pytest.Item]) -> None:
    """Reorder ``items`` in place: whole files, slowest recorded first; a file's own order kept."""
    seconds = recorded()
    count = Counter(item.nodeid.split("::", 1)[0] for item in items)

    def key(item: pytest.Item) -> tuple[float, int]:
        path = item.nodeid.split("::", 1)[0]
        return (-seconds.get(path, 0.0), -count[path])

    items.sort(key=key)  # stable: tests keep their order inside a file, and files stay whole


STARTS_LATE = ("tests/train/test_verl_autotool.py",)
"""Files never recorded, so they start after the recorded ones (see the module's docstring)."""


def parse(lines: list[str]) -> dict[str, float]:
    """Seconds per file from pytest's ``--durations=0`` table; files under one second, and those
    of :data:`STARTS_LATE`, dropped."""
    total: defaultdict[str, float] = defaultdict(float)
    for line in lines:
        m = LINE.match(line)
        if m and m.group(2) not in STARTS_LATE:
            total[m.group(2)] += float(m.group(1))
    return {path: round(s, 1) for path, s in sorted(total.items(), key=lambda kv: -kv[1]) if s >= 1.0}


def main() -> None:
    """Read a pytest run's output on stdin and write durations.json."""
    table = parse(sys.stdin.read().splitlines())
    if not table:
        raise SystemExit("no durations table on stdin: run pytest with --durations=0")
    FILE.write_text(json.dumps(table, indent=1) + "\n")
    print(f"{len(table)} files, {sum(table.values()):.0f} s in all, written to {FILE}")


if __name__ == "__main__":
    main()

"""Report sections a plugin adds: registered callables that build tables from a benchmark's runs.

A benchmark names the sections it adds (``register_benchmark(..., report_sections=(...))``).
The built-in ``express`` and ``autotool`` sections are drawn by the report itself; any other is
registered here with :func:`register_report_section`: a heading and a callable that receives
the runs of benchmarks naming the section and their systems, and returns the tables to show
(:class:`~eviseek.eval.tables.Table`). ``eviseek report`` puts each under its heading in
``index.html`` and ``report.md``, after the built-in benchmark sections, and its numbers in
``summary.json`` (``sections``)::

    from eviseek.eval.report_sections import register_report_section
    from eviseek.eval.tables import Cell, Table

    def longest(runs, systems):
        table = Table("longest", "Longest episode", "Steps of the longest episode", ["system", "steps"])
        for s in systems:
            table.add([Cell(s.label, numeric=False), Cell(str(max(r.steps for r in s.results.values())))])
        return [table]

    register_report_section("longest", "Episode length", longest)
    register_benchmark("mine", load, report_sections=("longest",))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from eviseek._registration import Origin, Origins, caller_origin
from eviseek.errors import ConfigError
from eviseek.eval.benchmark import REPORT_SECTIONS, declare_report_section
from eviseek.eval.metrics import SystemResults
from eviseek.eval.rundir import RunData
from eviseek.eval.tables import Table

__all__ = ["ReportSection", "SectionTables", "register_report_section", "section_tables", "table_record"]

SectionTables = Callable[[Sequence[RunData], Sequence[SystemResults]], list[Table]]
"""Builds a section's tables from the runs whose benchmarks add it and those runs' systems."""


@dataclass(frozen=True)
class ReportSection:
    """A registered report section: its heading and the callable that builds its tables."""

    name: str
    heading: str
    tables: SectionTables
    origin: Origin


_SECTIONS: dict[str, ReportSection] = {}
_ORIGINS = Origins("report section")


def register_report_section(
    name: str, heading: str, tables: SectionTables, *, replace: bool = False
) -> ReportSection:
    """Make ``name`` a report section a benchmark may add: ``tables(runs, systems)`` builds its
    tables under the heading ``heading``. Registering it again from another module raises
    unless ``replace=True`` (see :mod:`eviseek._registration`); the built-in sections
    (``express``, ``autotool``) are drawn by the report itself and cannot be registered."""
    if name in REPORT_SECTIONS:
        raise ConfigError(f"report section {name!r} is built in; register yours under another name")
    if not name.strip() or not heading.strip():
        raise ConfigError("a report section needs a name and a heading, e.g. ('longest', 'Episode length')")
    section = ReportSection(name, heading, tables, caller_origin())
    _ORIGINS.claim(name, section.origin, replace=replace, exists=name in _SECTIONS)
    _SECTIONS[name] = section
    declare_report_section(name)
    return section


def section_tables(
    runs: Sequence[RunData], systems: Sequence[SystemResults]
) -> list[tuple[ReportSection, list[Table]]]:
    """Each registered section some run's benchmark adds, with the tables it built from those
    runs and their systems (in the order the sections were registered)."""
    out = []
    for section in _SECTIONS.values():
        using = [r for r in runs if section.name in r.report_sections()]
        if not using:
            continue
        labels = {r.label for r in using}
        mine = [s for s in systems if len(runs) == 1 or s.run in labels]
        out.append((section, list(section.tables(using, mine))))
    return out


def table_record(table: Table) -> dict[str, Any]:
    """A section table's numbers as ``summary.json`` keeps them."""
    return {
        "key": table.key,
        "title": table.title,
        "columns": list(table.columns),
        "rows": [[cell.text for cell in row] for row in table.rows],
    }

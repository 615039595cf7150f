"""The AutoTool part of ``eviseek report`` (the ``autotool`` report section, which AutoTool's
image benchmarks register in :mod:`eviseek.eval.benchmarks.autotool`): for each system of a run
on those benchmarks whose episodes record a tool mode (``tool_on``/``tool_off``), the share of
tool-on and tool-off episodes per benchmark (the paper's Figure 3, as a PNG), the cost of
an answer in each mode, and each benchmark's own headline numbers.

Sources: Figure 3 of the AutoTool paper plots the frequency of the two modes per benchmark; its
Table 8 compares inference time of AutoTool and DeepEyes per benchmark. The per-mode split of
calls, tokens and latency within one system is ours (it is what the paper's efficiency argument
rests on: a tool-off answer costs one call). The numbers come from :mod:`eviseek.autotool.metrics`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

from pydantic import BaseModel, Field

from eviseek.autotool.metrics import ModeCost, ModeShare, headline_metrics, mode_costs, mode_shares
from eviseek.autotool.protocol import Mode
from eviseek.eval.benchmarks.autotool import KIND_KEY
from eviseek.eval.metrics import SystemResults
from eviseek.eval.rundir import RunData
from eviseek.eval.tables import Cell, Table, fmt, fmt_int

SECTION = "autotool"
"""The report section's name (:data:`eviseek.eval.benchmark.REPORT_SECTIONS`)."""
FIGURE = "autotool_mode_frequency"
TABLES = ("autotool-modes", "autotool-efficiency", "autotool-benchmarks")
"""The section's table keys, in the order the report shows them."""
TOOL_MODES: tuple[str, ...] = get_args(Mode)
"""The episode modes of the dual-mode agent; a system whose episodes record one is shown."""


class AutoToolSection(BaseModel):
    """The AutoTool numbers of one system (an autotool agent in one run)."""

    system: str
    shares: list[ModeShare]
    costs: list[ModeCost]
    headline: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Per benchmark: accuracy plus its own figure (cycle-averaged accuracy, POPE F1, mean IoU)."""


def autotool_sections(runs: Sequence[RunData], systems: Sequence[SystemResults]) -> list[AutoToolSection]:
    """One section per system of a run whose benchmark adds this section and whose results
    record a tool mode (the dual-mode agent's, whatever its name; other agents' modes, such as
    ``passive``, are not tool modes)."""
    by_run = {r.label: r for r in runs}
    with_section = {r.label for r in runs if SECTION in r.report_sections()}
    out = []
    for s in systems:
        if s.run not in with_section or not any(r.mode in TOOL_MODES for r in s.results.values()):
            continue
        rows = list(s.results.values())
        questions = by_run[s.run].questions
        headline = {}
        for bench in sorted({r.family or "-" for r in rows}):
            qs = [q for q in questions if (q.family or "-") == bench]
            kinds = {str(q.metadata.get(KIND_KEY, "other")) for q in qs}
            kind = kinds.pop() if len(kinds) == 1 else "other"
            headline[bench] = headline_metrics([r for r in rows if (r.family or "-") == bench], qs, kind)
        out.append(
            AutoToolSection(
                system=s.label, shares=mode_shares(rows), costs=mode_costs(rows), headline=headline
            )
        )
    return out


def autotool_tables(sections: Sequence[AutoToolSection]) -> dict[str, Table]:
    """The mode-frequency, cost-per-mode and benchmark tables (empty without AutoTool systems)."""
    if not sections:
        return {}
    multi = len(sections) > 1
    modes = Table(
        key="autotool-modes",
        title="AutoTool: mode frequency per benchmark",
        caption="Share of finished episodes (failed ones excluded) that chose each mode; the "
        "AutoTool paper's Figure 3 plots the same frequencies for its model on V*, HR-Bench and POPE.",
        columns=(["System"] if multi else [])
        + ["Benchmark", "Episodes", "tool_on (%)", "tool_off (%)", "none (%)"],
    )
    costs = Table(
        key="autotool-efficiency",
        title="AutoTool: cost per answer by mode",
        caption="Means per finished episode of each mode: model calls, zoom calls that reached the "
        "tool, input and output tokens (over episodes whose server reported them) and wall time. "
        "The paper's Table 8 compares inference time across models; this split by mode is ours.",
        columns=(["System"] if multi else [])
        + ["Mode", "Episodes", "Accuracy (%)", "Calls", "Zooms", "Input tok", "Output tok", "Latency (s)"],
    )
    bench = Table(
        key="autotool-benchmarks",
        title="AutoTool: benchmark metrics",
        caption="Accuracy and each benchmark's own figure: HR-Bench accuracy per category averaged "
        "over option cycles, POPE precision/recall/F1/yes-ratio (yes is positive), grounding mean IoU "
        "(correct at IoU >= 0.5), DynaMath's worst case, WeMath's four-dimensional metrics (IK, IG, "
        "CM, RM and the score, strict and loose).",
        columns=(["System"] if multi else []) + ["Benchmark", "Metric", "Value"],
    )
    for sec in sections:
        lead = [Cell(sec.system, numeric=False)] if multi else []
        for sh in sec.shares:
            modes.add(
                [
                    *lead,
                    Cell(sh.benchmark, numeric=False),
                    Cell(str(sh.n)),
                    Cell(fmt(100 * sh.tool_on)),
                    Cell(fmt(100 * sh.tool_off)),
                    Cell(fmt(100 * sh.undeclared)),
                ],
                "total" if sh.benchmark == "all" else "row",
            )
        for c in sec.costs:
            costs.add(
                [
                    *lead,
                    Cell(c.mode, numeric=False),
                    Cell(str(c.n)),
                    Cell(fmt(100 * c.accuracy)),
                    Cell(fmt(c.calls, 2)),
                    Cell(fmt(c.zoom_steps, 2)),
                    Cell(fmt_int(c.input_tokens)),
                    Cell(fmt_int(c.output_tokens)),
                    Cell(fmt(c.latency_s, 2)),
                ],
                "total" if c.mode == "all" else "row",
            )
        for name, metrics in sec.headline.items():
            for metric, value in metrics.items():
                bench.add(
                    [*lead, Cell(name, numeric=False), Cell(metric, numeric=False), Cell(fmt(value, 4))]
                )
    return {t.key: t for t in (modes, costs, bench)}


def mode_frequency_figure(sections: Sequence[AutoToolSection]) -> bytes | None:
    """Stacked bars of tool-on / tool-off share per benchmark (one group per system), or ``None``."""
    from eviseek.eval.plots import mode_share_bars

    bars: dict[str, tuple[float, float]] = {}
    for sec in sections:
        for sh in sec.shares:
            label = sh.benchmark if len(sections) == 1 else f"{sec.system} / {sh.benchmark}"
            bars[label] = (100 * sh.tool_on, 100 * sh.tool_off)
    return mode_share_bars(bars) if bars else None

"""Reports with the paper's tables from one or more run directories.

``build_report(run_dirs, out_dir)`` writes into ``out_dir`` (default ``RUN_DIR/report`` for one
run):

    index.html     self-contained page: inline CSS, figures as base64 PNG, no external resource
    report.md      the same tables in Markdown (figures as PNG files under figures/)
    results.csv    one row per (system, question), missing episodes included
    summary.json   every number in the tables (a :class:`ReportData`)
    figures/       accuracy_by_family.png, support_decomposition.png (autotool_mode_frequency.png
                   for runs of the autotool agent)
    episodes/      one page per episode via ``eviseek.viewer.write_episode_page`` when available

Several run directories (e.g. the same agents under two models) are compared side by side:
columns are grouped by run, the best agent per run is in bold, and the paired comparisons cover
EviSeek against each baseline within each run, Holm-corrected together (the paper's family;
``compare`` chooses another, see :mod:`eviseek.eval.families`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eviseek.eval.autotool_report import FIGURE as AUTOTOOL_FIGURE
from eviseek.eval.autotool_report import (
    autotool_sections,
    autotool_tables,
    mode_frequency_figure,
)
from eviseek.eval.express import express_rows, express_table
from eviseek.eval.families import choose_family
from eviseek.eval.metrics import (
    SystemResults,
    accuracy_table,
    mean_score,
    paired_comparisons,
    resource_usage,
    support_table,
)
from eviseek.eval.report_data import ReportData, RunInfo, SystemInfo
from eviseek.eval.report_render import (
    CSV_COLUMNS,
    csv_rows,
    episode_grid,
    html_report,
    markdown_report,
    write_csv,
    write_episode_pages,
)
from eviseek.eval.report_sections import section_tables, table_record
from eviseek.eval.rundir import RunData, load_run, systems_of
from eviseek.eval.scoring import rules_count
from eviseek.eval.stats import PAPER_SEED
from eviseek.eval.tables import (
    Table,
    blind_subcategory_table,
    comparison_table,
    decomposition_table,
    family_accuracy_table,
    is_blind,
    resource_table,
    status_table,
    step_cost_table,
    subcategory_accuracy_table,
    support_subcategory_table,
)
from eviseek.types import Question
from eviseek.types.atomic import write_atomic

__all__ = [
    "CSV_COLUMNS",
    "ReportData",
    "ReportFiles",
    "RunInfo",
    "SystemInfo",
    "build_report",
    "build_tables",
    "compute_report",
    "default_out_dir",
]


@dataclass
class ReportFiles:
    """Where a report was written, and its numbers."""

    out_dir: Path
    html: Path
    markdown: Path
    csv: Path
    summary: Path
    figures: list[Path]
    episode_pages: list[Path]
    data: ReportData
    tables: dict[str, Table] = field(default_factory=dict)


def rules_in_force(questions: Sequence[Question], dataset: str | None = None) -> str:
    """The rules the questions are scored by (their benchmark's: ``esibench:paper``,
    ``autotool``..., else ``contract``), with counts when there is more than one."""
    counts = rules_count(questions, dataset)
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{name} ({n})" for name, n in sorted(counts.items()))


def compute_report(
    runs: Sequence[RunData],
    *,
    n_resamples: int = 200_000,
    seed: int = PAPER_SEED,
    confidence: float = 0.95,
    compare: str | None = None,
) -> tuple[ReportData, list[SystemResults]]:
    """All report numbers from loaded runs (no files written)."""
    if not runs:
        raise ValueError("give at least one run directory")
    systems = systems_of(list(runs))
    usage = {s.label: resource_usage(s) for s in systems}
    family = choose_family(systems, compare)
    data = ReportData(
        runs=[
            RunInfo(
                label=r.label,
                path=str(r.path),
                model=r.model,
                agents=r.agents,
                dataset=str(r.config.get("dataset", "")),
                n_questions=len(r.questions),
                rules=rules_in_force(r.questions, r.dataset),
                support_sources=r.support_sources,
            )
            for r in runs
        ],
        systems=[SystemInfo(label=s.label, agent=s.agent, model=s.model, run=s.run) for s in systems],
        accuracy=accuracy_table(systems),
        support=support_table(systems),
        resources=usage,
        scores={s.label: mean_score(s) for s in systems},
        comparisons=paired_comparisons(
            systems, family.pairs, n_resamples=n_resamples, seed=seed, confidence=confidence
        ),
        settings={
            "n_resamples": n_resamples,
            "seed": seed,
            "confidence": confidence,
            "family": family.name,
            "family_description": family.description,
        },
        warnings=[w for r in runs for w in r.warnings],
        express=[
            row.model_copy(update={"agent": row.agent if len(runs) == 1 else f"{r.label} / {row.agent}"})
            for r in runs
            if "express" in r.report_sections()
            for row in express_rows(r.path)
        ],
        autotool=autotool_sections(runs, systems),
    )
    return data, systems


def build_tables(data: ReportData, systems: Sequence[SystemResults]) -> dict[str, Table]:
    """The report's tables keyed by id (support-by-subcategory only when any support exists)."""
    tables = {
        "accuracy-family": family_accuracy_table(data.accuracy, systems),
        "accuracy-subcategory": subcategory_accuracy_table(data.accuracy, systems),
        "support-decomposition": decomposition_table(data.support, systems),
        "resources": resource_table(data.resources, systems),
        "step-cost": step_cost_table(
            data.resources, next(r for r in data.accuracy if r.level == "overall").acc, systems
        ),
        "status": status_table(
            data.resources,
            data.scores,
            {
                s.label: r.support_sources.get(s.agent, {})
                for r in data.runs
                for s in systems
                if s.run == r.label
            },
            systems,
        ),
    }
    if any(is_blind(s) for s in systems):
        tables["blind-subcategory"] = blind_subcategory_table(data.accuracy, systems)
    if data.express:
        tables["express"] = express_table(data.express)
    tables.update(autotool_tables(data.autotool))
    overall = next(r for r in data.support if r.level == "overall")
    if any(p.available for p in overall.parts.values()):
        tables["support-subcategory"] = support_subcategory_table(data.support, systems)
    if data.comparisons:
        s = data.settings
        tables["paired"] = comparison_table(
            data.comparisons,
            s["confidence"],
            s["n_resamples"],
            s["seed"],
            family=s.get("family_description", ""),
        )
    return tables


def _figures(data: ReportData, systems: Sequence[SystemResults]) -> dict[str, bytes]:
    from eviseek.eval.plots import accuracy_bars, support_stacked_bars

    fams = [r for r in data.accuracy if r.level in ("family", "overall")]
    figs = {
        "accuracy_by_family": accuracy_bars(
            [r.name for r in fams], {s.label: [r.acc[s.label] for r in fams] for s in systems}
        )
    }
    overall = next(r for r in data.support if r.level == "overall")
    parts: dict[str, dict[str, float]] = {}
    for s in systems:
        d = overall.parts[s.label]
        if d.available and None not in (d.C, d.GW, d.P, d.N):
            name = s.label if d.complete else f"{s.label} (graded {d.n_graded}/{d.n})"
            parts[name] = {"C": d.C or 0.0, "GW": d.GW or 0.0, "P": d.P or 0.0, "N": d.N or 0.0}
    if parts:
        figs["support_decomposition"] = support_stacked_bars(parts)
    modes = mode_frequency_figure(data.autotool)
    if modes is not None:
        figs[AUTOTOOL_FIGURE] = modes
    return figs


def default_out_dir(run_dirs: Sequence[str | Path]) -> Path:
    """``RUN_DIR/report`` for one run; several runs need an explicit output folder."""
    if len(run_dirs) == 1:
        return Path(run_dirs[0]) / "report"
    raise ValueError("several run directories were given: choose where the comparison goes with --out DIR")


def build_report(
    run_dirs: Sequence[str | Path],
    out_dir: str | Path | None = None,
    *,
    n_resamples: int = 200_000,
    seed: int = PAPER_SEED,
    confidence: float = 0.95,
    episodes: bool = True,
    compare: str | None = None,
    plugins: Sequence[str] = (),
) -> ReportFiles:
    """Load the runs, compute every table and write the report files (see the module docstring).
    ``plugins`` are imported before each run's own (a run's plugin that moved)."""
    if not run_dirs:
        raise ValueError("give at least one run directory")
    resolved = [Path(p).resolve() for p in run_dirs]
    if len(set(resolved)) != len(resolved):
        raise ValueError("the same run directory was given twice")
    out = Path(out_dir) if out_dir is not None else default_out_dir(run_dirs)
    runs = [load_run(p, plugins=plugins) for p in run_dirs]
    data, systems = compute_report(
        runs, n_resamples=n_resamples, seed=seed, confidence=confidence, compare=compare
    )
    tables = build_tables(data, systems)
    extra: list[tuple[str, list[str]]] = []
    for section, section_tables_ in section_tables(runs, systems):  # sections plugins registered
        keys = []
        for table in section_tables_:
            keys.append(f"{section.name}/{table.key}")
            tables[keys[-1]] = table
        extra.append((section.heading, keys))
        data.sections[section.name] = [table_record(t) for t in section_tables_]

    out.mkdir(parents=True, exist_ok=True)
    hrefs, pages, notes = write_episode_pages(runs, out, episodes)
    data.warnings += notes
    figure_bytes = _figures(data, systems)
    figure_paths = [write_atomic(out / "figures" / f"{name}.png", png) for name, png in figure_bytes.items()]
    rows = csv_rows(runs, systems, hrefs)
    csv_path = write_csv(out / "results.csv", rows)
    # ``sections`` only when a plugin's section drew any: built-in reports stay as they were.
    summary = write_atomic(
        out / "summary.json", data.model_dump_json(indent=1, exclude=None if data.sections else {"sections"})
    )
    md = write_atomic(
        out / "report.md",
        markdown_report(data, tables, {n: f"figures/{n}.png" for n in figure_bytes}, sections=extra),
    )
    page = html_report(
        data, tables, figure_bytes, systems, episode_grid(systems, rows), bool(pages), sections=extra
    )
    html_path = write_atomic(out / "index.html", page)
    return ReportFiles(
        out_dir=out,
        html=html_path,
        markdown=md,
        csv=csv_path,
        summary=summary,
        figures=figure_paths,
        episode_pages=pages,
        data=data,
        tables=tables,
    )

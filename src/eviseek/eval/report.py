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

import base64
import csv
import datetime as _dt
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eviseek.eval.autotool_report import FIGURE as AUTOTOOL_FIGURE
from eviseek.eval.autotool_report import TABLES as AUTOTOOL_TABLES
from eviseek.eval.autotool_report import (
    AutoToolSection,
    autotool_sections,
    autotool_tables,
    mode_frequency_figure,
)
from eviseek.eval.express import ExpressRow, express_rows, express_table
from eviseek.eval.families import choose_family
from eviseek.eval.metrics import (
    AccuracyRow,
    ResourceUsage,
    SupportRow,
    SystemResults,
    accuracy_table,
    mean_score,
    outcome_of,
    paired_comparisons,
    resource_usage,
    support_table,
)
from eviseek.eval.rundir import RunData, load_run, safe_component, systems_of
from eviseek.eval.stats import PAPER_SEED, PairedTest
from eviseek.eval.tables import (
    Table,
    comparison_table,
    decomposition_table,
    family_accuracy_table,
    resource_table,
    status_table,
    step_cost_table,
    subcategory_accuracy_table,
    support_subcategory_table,
)

CSV_COLUMNS = [
    "run",
    "model",
    "agent",
    "system",
    "question_id",
    "family",
    "subcategory",
    "status",
    "correct",
    "answer",
    "ground_truth",
    "score",
    "support",
    "mode",
    "steps",
    "calls",
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "images_in_answer",
    "decisions",
    "wall_time_s",
    "error",
    "episode_page",
]


class RunInfo(BaseModel):
    """What the report says about one run directory."""

    label: str
    path: str
    model: str
    agents: list[str]
    dataset: str = ""
    n_questions: int
    support_sources: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Per agent: results whose support came from the environment, the judge, or nowhere."""


class SystemInfo(BaseModel):
    """One column of the report: an agent in a run."""

    label: str
    agent: str
    model: str
    run: str


class ReportData(BaseModel):
    """Every number the report shows (saved as ``summary.json``)."""

    runs: list[RunInfo]
    systems: list[SystemInfo]
    accuracy: list[AccuracyRow]
    support: list[SupportRow]
    resources: dict[str, ResourceUsage]
    scores: dict[str, float | None]
    comparisons: list[PairedTest]
    settings: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    express: list[ExpressRow] = Field(default_factory=list)
    """EXPRESS-Bench's C, C*, E_path and d_T per system (runs with navigation questions only)."""
    autotool: list[AutoToolSection] = Field(default_factory=list)
    """Mode frequency, cost per mode and benchmark metrics per AutoTool system (if any)."""


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


def _write(path: Path, text: str | bytes) -> Path:
    """Write atomically, so a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(text, bytes):
        tmp.write_bytes(text)
    else:
        tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def _episode_pages(
    runs: Sequence[RunData], out: Path, enabled: bool
) -> tuple[dict[tuple[str, str, str], str], list[Path], list[str]]:
    """Write viewer pages; return {(run, agent, qid): href relative to out}, pages, warnings."""
    hrefs: dict[tuple[str, str, str], str] = {}
    pages: list[Path] = []
    if not enabled:
        return hrefs, pages, []
    try:
        from eviseek.viewer import write_episode_page
    except ImportError:
        return (
            hrefs,
            pages,
            ["the episode viewer (eviseek.viewer) is not available: no episode pages or links"],
        )
    multi = len(runs) > 1
    for run in runs:
        by_id = {q.id: q for q in run.questions}
        for (agent, qid), ep_dir in sorted(run.episode_dirs.items()):
            rel = (
                ep_dir.relative_to(run.path / "episodes")
                if ep_dir.is_relative_to(run.path / "episodes")
                else None
            )
            rel_page = Path(*(rel.parts if rel else (agent, qid)))
            if multi:
                rel_page = Path(safe_component(run.label)) / rel_page
            page = out / "episodes" / rel_page.parent / f"{rel_page.name}.html"
            back = os.path.relpath(out / "index.html", page.parent)
            write_episode_page(ep_dir, page, by_id.get(qid), links=[("Report", Path(back).as_posix())])
            pages.append(page)
            hrefs[(run.label, agent, qid)] = page.relative_to(out).as_posix()
    return hrefs, pages, []


def _csv_rows(runs: Sequence[RunData], systems: Sequence[SystemResults], hrefs: dict) -> list[dict[str, Any]]:
    by_run = {r.label: r for r in runs}
    rows: list[dict[str, Any]] = []
    for s in systems:
        run = by_run[s.run]
        truths = {q.id: q.ground_truth for q in run.questions}
        for q in s.questions:
            r = s.results.get(q.id)
            o = outcome_of(q, r)
            gt = truths.get(q.id)
            rows.append(
                {
                    "run": s.run,
                    "model": s.model,
                    "agent": s.agent,
                    "system": s.label,
                    "question_id": q.id,
                    "family": q.family,
                    "subcategory": q.subcategory,
                    "status": o.status,
                    "correct": int(o.correct),
                    "answer": "" if r is None or r.answer is None else r.answer,
                    "ground_truth": " | ".join(gt) if isinstance(gt, list) else ("" if gt is None else gt),
                    "score": "" if r is None or r.score is None else r.score,
                    "support": "" if o.support is None else o.support,
                    "mode": "" if r is None or r.mode is None else r.mode,
                    "steps": "" if r is None else r.steps,
                    "calls": "" if r is None else r.calls,
                    "input_tokens": "" if r is None or r.input_tokens is None else r.input_tokens,
                    "output_tokens": "" if r is None or r.output_tokens is None else r.output_tokens,
                    "reasoning_tokens": "" if r is None or r.reasoning_tokens is None else r.reasoning_tokens,
                    "images_in_answer": "" if r is None else r.images_in_answer,
                    "decisions": "" if r is None or r.decisions is None else r.decisions,
                    "wall_time_s": "" if r is None else round(r.wall_time_s, 3),
                    "error": "" if r is None or r.error is None else r.error,
                    "episode_page": hrefs.get((s.run, s.agent, q.id), ""),
                }
            )
    return rows


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(path)
    return path


def _episode_rows(systems: Sequence[SystemResults], csv_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The per-question verdict grid of the HTML page (questions in first-seen order)."""
    grid: dict[str, dict[str, Any]] = {}
    for row in csv_rows:
        entry = grid.setdefault(
            row["question_id"],
            {
                "qid": row["question_id"],
                "family": row["family"],
                "subcategory": row["subcategory"],
                "truth": row["ground_truth"],
                "by": {},
            },
        )
        entry["by"][row["system"]] = row
    out = []
    for entry in grid.values():
        cells = []
        for s in systems:
            row = entry["by"].get(s.label)
            if row is None:
                cells.append({"text": "—", "cls": "none", "href": ""})
                continue
            status = row["status"]
            if status == "answered":
                text = ("✓ " if row["correct"] else "✗ ") + str(row["answer"])
                cls = "ok" if row["correct"] else "bad"
            else:
                text, cls = status.replace("_", " "), "bad" if status != "missing" else "none"
            cells.append({"text": text, "cls": cls, "href": row["episode_page"]})
        out.append({**entry, "cells": cells})
    return out


def _markdown(data: ReportData, tables: dict[str, Table], figures: dict[str, str]) -> str:
    lines = ["# eviseek evaluation report", ""]
    for w in data.warnings:  # first: a reader must see failures before any number
        lines.append(f"> Note: {w}")
    if data.warnings:
        lines.append("")
    lines.append("| Run | Model | Agents | Questions | Dataset |")
    lines.append("|---|---|---|---:|---|")
    for r in data.runs:
        lines.append(f"| {r.label} | {r.model} | {', '.join(r.agents)} | {r.n_questions} | {r.dataset} |")
    lines.append("")
    order = [
        ("Task accuracy", ["accuracy-family", "fig:accuracy_by_family", "accuracy-subcategory"]),
        ("EXPRESS-Bench", ["express"]),
        (
            "AutoTool modes",
            ["autotool-modes", f"fig:{AUTOTOOL_FIGURE}", "autotool-efficiency", "autotool-benchmarks"],
        ),
        ("Visual support", ["support-decomposition", "fig:support_decomposition", "support-subcategory"]),
        ("Resource use", ["resources", "step-cost"]),
        ("Paired comparisons", ["paired"]),
        ("Episodes", ["status"]),
    ]
    for heading, keys in order:
        if heading == "EXPRESS-Bench" and "express" not in tables:
            continue  # a run without navigation questions
        if heading == "AutoTool modes" and "autotool-modes" not in tables:
            continue  # no system ran the autotool agent
        lines += [f"## {heading}", ""]
        for key in keys:
            if key.startswith("fig:"):
                name = key[4:]
                if name in figures:
                    lines += [f"![{name.replace('_', ' ')}]({figures[name]})", ""]
            elif key in tables:
                lines.append(tables[key].markdown())
        if heading == "Paired comparisons" and "paired" not in tables:
            lines += ["No pair of systems shares questions to compare.", ""]
    lines.append("Per-episode rows are in `results.csv`; every number is in `summary.json`.")
    return "\n".join(lines) + "\n"


def _html(
    data: ReportData,
    tables: dict[str, Table],
    figures: dict[str, bytes],
    systems: Sequence[SystemResults],
    episode_rows: list[dict[str, Any]],
    pages: bool,
) -> str:
    import jinja2

    from eviseek import __version__

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("eviseek.eval", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    rendered = {k: t.html() for k, t in tables.items()}
    optional = ("support-subcategory", "paired", "express", *AUTOTOOL_TABLES)
    for key in optional:
        rendered.setdefault(key, "")
    b64 = {k: base64.b64encode(v).decode("ascii") for k, v in figures.items()}
    return env.get_template("report.html.j2").render(
        title="eviseek evaluation report",
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        version=__version__,
        runs=data.runs,
        warnings=data.warnings,
        tables=rendered,
        figures={
            "accuracy": b64.get("accuracy_by_family", ""),
            "support": b64.get("support_decomposition", ""),
            "modes": b64.get(AUTOTOOL_FIGURE, ""),
        },
        systems=[s.label for s in systems],
        episode_rows=episode_rows,
        pages=pages,
    )


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
) -> ReportFiles:
    """Load the runs, compute every table and write the report files (see the module docstring)."""
    if not run_dirs:
        raise ValueError("give at least one run directory")
    resolved = [Path(p).resolve() for p in run_dirs]
    if len(set(resolved)) != len(resolved):
        raise ValueError("the same run directory was given twice")
    out = Path(out_dir) if out_dir is not None else default_out_dir(run_dirs)
    runs = [load_run(p) for p in run_dirs]
    data, systems = compute_report(
        runs, n_resamples=n_resamples, seed=seed, confidence=confidence, compare=compare
    )
    tables = build_tables(data, systems)

    out.mkdir(parents=True, exist_ok=True)
    hrefs, pages, notes = _episode_pages(runs, out, episodes)
    data.warnings += notes
    figure_bytes = _figures(data, systems)
    figure_paths = [_write(out / "figures" / f"{name}.png", png) for name, png in figure_bytes.items()]
    rows = _csv_rows(runs, systems, hrefs)
    csv_path = _write_csv(out / "results.csv", rows)
    summary = _write(out / "summary.json", data.model_dump_json(indent=1))
    md = _write(out / "report.md", _markdown(data, tables, {n: f"figures/{n}.png" for n in figure_bytes}))
    page = _html(data, tables, figure_bytes, systems, _episode_rows(systems, rows), bool(pages))
    html_path = _write(out / "index.html", page)
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

"""Writing a report's files: the Markdown and HTML pages, ``results.csv`` and the episode pages.

:func:`eviseek.eval.report.build_report` computes the numbers and tables and calls these; every
file is written atomically, so a reader never sees half a report.
"""

from __future__ import annotations

import base64
import csv
import datetime as _dt
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eviseek.eval.autotool_report import FIGURE as AUTOTOOL_FIGURE
from eviseek.eval.autotool_report import TABLES as AUTOTOOL_TABLES
from eviseek.eval.metrics import SystemResults, outcome_of
from eviseek.eval.rundir import RunData, safe_component
from eviseek.eval.tables import Table
from eviseek.types.atomic import atomic_file
from eviseek.types.rundir import EPISODES_DIR

if TYPE_CHECKING:
    from eviseek.eval.report_data import ReportData

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


def write_episode_pages(
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
                ep_dir.relative_to(run.path / EPISODES_DIR)
                if ep_dir.is_relative_to(run.path / EPISODES_DIR)
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


def csv_rows(runs: Sequence[RunData], systems: Sequence[SystemResults], hrefs: dict) -> list[dict[str, Any]]:
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


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with atomic_file(path, newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def episode_grid(systems: Sequence[SystemResults], csv_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
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


def markdown_report(
    data: ReportData,
    tables: dict[str, Table],
    figures: dict[str, str],
    *,
    sections: Sequence[tuple[str, list[str]]] = (),
) -> str:
    lines = ["# eviseek evaluation report", ""]
    for w in data.warnings:  # first: a reader must see failures before any number
        lines.append(f"> Note: {w}")
    if data.warnings:
        lines.append("")
    lines.append("| Run | Model | Agents | Questions | Dataset | Scoring rules |")
    lines.append("|---|---|---|---:|---|---|")
    for r in data.runs:
        lines.append(
            f"| {r.label} | {r.model} | {', '.join(r.agents)} | {r.n_questions} | {r.dataset} | {r.rules} |"
        )
    lines.append("")
    order = [
        (
            "Task accuracy",
            ["accuracy-family", "fig:accuracy_by_family", "accuracy-subcategory", "blind-subcategory"],
        ),
        ("EXPRESS-Bench", ["express"]),
        (
            "AutoTool modes",
            ["autotool-modes", f"fig:{AUTOTOOL_FIGURE}", "autotool-efficiency", "autotool-benchmarks"],
        ),
        *[(heading, keys) for heading, keys in sections],  # plugins' sections (report_sections)
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


def html_report(
    data: ReportData,
    tables: dict[str, Table],
    figures: dict[str, bytes],
    systems: Sequence[SystemResults],
    episode_rows: list[dict[str, Any]],
    pages: bool,
    *,
    sections: Sequence[tuple[str, list[str]]] = (),
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
    optional = ("support-subcategory", "blind-subcategory", "paired", "express", *AUTOTOOL_TABLES)
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
        sections=[(heading, [rendered[k] for k in keys]) for heading, keys in sections],
    )

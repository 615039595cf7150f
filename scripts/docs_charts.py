"""Draw every chart and diagram of the documentation site, from the committed results files.

One command regenerates them all (after a rerun changed a file under docs/results/, or after
changing this script):

    .venv/bin/python scripts/docs_charts.py

Charts: for each results file ``docs/results/NAME.json`` (written by ``scripts/results_file.py``
from a run directory), ``docs/images/charts/NAME.svg`` shows every agent's accuracy and ``C``
per slice (task family or question kind) with their bootstrap intervals. Each chart records the
SHA-256 of the results file it was drawn from in its SVG metadata (``dc:source``), so
``tests/docs/test_charts.py`` fails when a results file changed and its chart was not redrawn;
a content hash, because a git clone does not keep modification times.

Diagrams (``docs/images/diagrams/``): the EviSeek loop, the run directory and the scale-out
layout (harness, env servers, model server, Ray nodes), drawn with matplotlib from the
structures listed below.

SVGs are written without dates and with a fixed id salt, so drawing twice gives the same bytes.

Pages: a line ``<!-- chart: NAME -->`` in docs/results.md or README.md (``--pages``) marks where
chart NAME belongs. When the chart exists, the line after the marker is its image (written with
an alt text from the results file unless an image of that chart is already there); when it does
not, no image of it is left there. So a new results file (the houses' after their first complete
run) appears on both pages with this one command, and a page never shows a chart that is gone.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from eviseek.eval.results_file import C_METRIC_TEXT, ResultsFile, file_sha256, read_results_file  # noqa: E402

RESULTS = ROOT / "docs" / "results"
IMAGES = ROOT / "docs" / "images"
PAGES = (ROOT / "docs" / "results.md", ROOT / "README.md")
CHART_SLOT = re.compile(r"^<!-- chart: ([A-Za-z0-9_.-]+) -->$")
SOURCE_PREFIX = "results file sha256:"
# Colour-blind-safe (Okabe-Ito), one per agent in the order the results file lists them.
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]


def _figure(width: float, height: float, *, layout: str | None = None):  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "eviseek-docs"  # stable element ids
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: small files, searchable
    matplotlib.rcParams["font.family"] = "DejaVu Sans"
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout=layout)
    FigureCanvasSVG(fig)
    return fig


def _save(fig, path: Path, *, title: str, source: str) -> None:  # type: ignore[no-untyped-def]
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(
        path,
        format="svg",
        bbox_inches="tight",
        metadata={"Date": None, "Creator": "scripts/docs_charts.py", "Title": title, "Source": source},
    )


# --------------------------------------------------------------------------- results charts


def chart_source(results_path: Path) -> str:
    """The ``dc:source`` a chart of ``results_path`` records."""
    return f"{SOURCE_PREFIX}{file_sha256(results_path)}"


def draw_results_chart(results: ResultsFile, results_path: Path, out: Path) -> None:
    """Accuracy and C per slice, one bar per agent, with bootstrap intervals as whiskers."""
    slices = [s.name for s in results.agents[0].slices] + ["Overall"]
    n_agents = len(results.agents)
    row_h = 0.1 * n_agents + 0.1
    fig = _figure(9.0, 1.6 + row_h * len(slices), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    bar = 0.8 / n_agents
    level = "family" if results.slice_level == "family" else "question kind"
    for ax, metric in zip(axes, ("accuracy", "C"), strict=True):
        for k, agent in enumerate(results.agents):
            rows = [*agent.slices, agent.overall]
            ys, vals, lo, hi = [], [], [], []
            for i, row in enumerate(rows):
                est = row.accuracy if metric == "accuracy" else row.C
                if est is None:
                    continue
                ys.append(i + (k - (n_agents - 1) / 2) * bar)
                vals.append(est.value)
                lo.append(est.value - est.low)
                hi.append(est.high - est.value)
            ax.barh(
                ys,
                vals,
                height=bar * 0.92,
                color=COLOURS[k % len(COLOURS)],
                xerr=[lo, hi],
                error_kw={"elinewidth": 0.8, "capsize": 1.5, "ecolor": "#333333"},
                label=agent.label if metric == "accuracy" else None,
            )
        ax.set_xlim(0, 100)
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
        ax.axhline(len(slices) - 1.5, color="#999999", linewidth=0.6)
        label = "accuracy (%)" if metric == "accuracy" else C_METRIC_TEXT[results.c_metric] + " (%)"
        ax.set_xlabel(label, fontsize=9)
    axes[0].set_yticks(range(len(slices)))
    axes[0].set_yticklabels(
        [
            f"{s} ({n})"
            for s, n in zip(
                slices, [r.n for r in [*results.agents[0].slices, results.agents[0].overall]], strict=True
            )
        ],
        fontsize=9,
    )
    axes[0].invert_yaxis()
    fig.legend(loc="outside lower center", ncol=min(5, n_agents), frameon=False, fontsize=9)
    pct = round(100 * results.confidence)
    where = f"docs/results/{results_path.name}"  # where it is committed, wherever it was read
    fig.suptitle(
        f"{results.name}: accuracy and C per {level} (questions in brackets), {results.model} model\n"
        f"whiskers: {pct}% bootstrap intervals; "
        f"from {where}, measured {results.measured} at commit {results.commit or 'unknown'}",
        fontsize=10,
    )
    _save(fig, out, title=f"{results.name} per {level}", source=chart_source(results_path))


# ---------------------------------------------------------------------------------- diagrams


@dataclass
class Box:
    """A labelled box at (x, y) (its centre), in diagram units."""

    key: str
    title: str
    body: str = ""
    x: float = 0.0
    y: float = 0.0
    w: float = 2.2
    h: float = 1.1
    colour: str = "#e8f1fa"


def _boxes_and_arrows(
    boxes: Sequence[Box],
    arrows: Sequence[tuple[str, str, str]],
    size: tuple[float, float],
    limits: tuple[float, float, float, float],
):  # type: ignore[no-untyped-def]
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    fig = _figure(*size)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(limits[0], limits[1])
    ax.set_ylim(limits[2], limits[3])
    ax.set_aspect("equal")
    ax.axis("off")
    where = {b.key: b for b in boxes}
    for b in boxes:
        ax.add_patch(
            FancyBboxPatch(
                (b.x - b.w / 2, b.y - b.h / 2),
                b.w,
                b.h,
                boxstyle="round,pad=0.02,rounding_size=0.12",
                facecolor=b.colour,
                edgecolor="#2b4c6f",
                linewidth=1.0,
            )
        )
        if b.body:
            ax.text(b.x, b.y + b.h / 2 - 0.22, b.title, ha="center", va="center", fontsize=12, weight="bold")
            ax.text(b.x, b.y - 0.12, b.body, ha="center", va="center", fontsize=9.5, linespacing=1.2)
        else:
            ax.text(b.x, b.y, b.title, ha="center", va="center", fontsize=12, weight="bold")
    for a, b, label in arrows:
        start, end = where[a], where[b]
        p, q = _border(start, end), _border(end, start)
        ax.add_patch(
            FancyArrowPatch(
                p,
                q,
                arrowstyle="-|>",
                mutation_scale=12,
                color="#2b4c6f",
                linewidth=1.1,
                shrinkA=0,
                shrinkB=0,
            )
        )
        if label:
            mx, my = (p[0] + q[0]) / 2, (p[1] + q[1]) / 2
            vertical = abs(q[0] - p[0]) < abs(q[1] - p[1])
            ax.text(
                mx + (0.08 if vertical else 0.0),
                my + (0.0 if vertical else 0.08),
                label,
                ha="left" if vertical else "center",
                va="center" if vertical else "bottom",
                fontsize=9,
                color="#333333",
            )
    return fig


def _border(box: Box, towards: Box, gap: float = 0.06) -> tuple[float, float]:
    """Where the line from ``box``'s centre to ``towards``'s centre leaves ``box`` (plus a gap)."""
    dx, dy = towards.x - box.x, towards.y - box.y
    t = min(
        (box.w / 2 + gap) / abs(dx) if dx else float("inf"),
        (box.h / 2 + gap) / abs(dy) if dy else float("inf"),
    )
    return box.x + t * dx, box.y + t * dy


LOOP = [
    Box("q", "question", "and the first view", 0.0, 0.0, 1.9, 1.0, "#f3f3f3"),
    Box("demands", "demands", "what must be seen\nto settle it", 2.6, 0.0),
    Box("plan", "plan", "subtasks that acquire\nthe demands", 5.3, 0.0),
    Box(
        "seek",
        "seek",
        "per decision an intent\n(move, rise, circle, test)\nexpanded into actions",
        8.0,
        0.0,
        2.4,
        1.3,
    ),
    Box("env", "environment", "step budget;\nviews and outcomes", 8.0, -2.4, 2.4, 1.1, "#fdf2e2"),
    Box("board", "evidence board", "keep: the useful\nviews, up to 20", 5.3, -2.4),
    Box("answer", "answer", "from the board's\nframes and notes", 2.6, -2.4, 2.2, 1.1, "#e6f4ea"),
]
LOOP_ARROWS = [
    ("q", "demands", ""),
    ("demands", "plan", ""),
    ("plan", "seek", "next subtask"),
    ("seek", "env", "actions"),
    ("env", "board", "frames"),
    ("board", "plan", "more subtasks?"),
    ("board", "answer", "plan done or\nbudget spent"),
]


def draw_loop(out: Path) -> None:
    """EviSeek's stages: demands, plan, seek (acting in the environment), board, answer."""
    fig = _boxes_and_arrows(LOOP, LOOP_ARROWS, (9.6, 3.9), (-1.1, 9.4, -3.2, 0.8))
    _save(fig, out, title="The EviSeek loop", source="scripts/docs_charts.py LOOP")


RUN_DIR = [
    ("RUN_DIR/", "one evaluation (--out)"),
    ("  run.json", "settings: agents, model, dataset, budget, seed, the questions' hash"),
    ("  questions.jsonl", "the questions as they were when the run started"),
    ("  question_images/", "their images, named by content"),
    ("  prompts/", "templates/: the prompt templates used; first/AGENT.md: each agent's first request"),
    ("  episodes/AGENT/QUESTION_ID/", "one finished episode"),
    ("    trajectory.json", "every step, image, model call and the answer: the source of truth"),
    ("  results.sqlite", "scores of finished episodes (WAL, fsynced); rebuilt from the trajectories"),
    ("  support.jsonl, express.jsonl", "judge grades, once eviseek judge ran"),
    ("  report/", "eviseek report: index.html, report.md, results.csv, summary.json"),
    ("    episodes/AGENT/*.html", "a page per episode (eviseek view)"),
]


def draw_run_dir(out: Path) -> None:
    """The run directory as a tree, each entry with what it holds."""
    from matplotlib.patches import FancyBboxPatch

    n = len(RUN_DIR)
    fig = _figure(9.6, 0.36 * n + 0.5)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 10)
    ax.set_ylim(-n - 0.4, 0.6)
    ax.axis("off")
    ax.add_patch(
        FancyBboxPatch(
            (0.05, -n - 0.25),
            9.9,
            n + 0.7,
            boxstyle="round,pad=0.02,rounding_size=0.15",
            facecolor="#f7f9fb",
            edgecolor="#2b4c6f",
            linewidth=1.0,
        )
    )
    for i, (name, what) in enumerate(RUN_DIR):
        depth = (len(name) - len(name.lstrip(" "))) // 2
        x = 0.3 + 0.45 * depth
        y = -i
        if depth:  # a tree branch from the parent's column
            ax.plot([x - 0.3, x - 0.3, x - 0.08], [y + 0.55, y, y], color="#7a8fa6", linewidth=0.8)
        ax.text(
            x,
            y,
            name.strip(),
            fontsize=9.5,
            family="DejaVu Sans Mono",
            va="center",
            weight="bold" if name.strip().endswith("/") else "normal",
        )
        ax.text(4.3, y, what, fontsize=8.5, va="center", color="#333333")
    _save(fig, out, title="A run directory", source="scripts/docs_charts.py RUN_DIR")


SCALE = [
    Box(
        "harness", "harness", "eviseek eval: agents,\nmodel client, committer\n→ RUN_DIR", 0.0, 0.0, 2.8, 1.4
    ),
    Box("model", "model server", "vLLM, SGLang, any\nOpenAI-compatible", 0.0, -2.6, 2.8, 1.1, "#fdf2e2"),
    Box(
        "env1",
        "env server",
        "eviseek env serve\n(GPU machine: sessions,\nsimulators, support grading)",
        4.6,
        0.9,
        3.0,
        1.4,
        "#e6f4ea",
    ),
    Box("env2", "env server", "another simulator\nmachine", 4.6, -1.0, 3.0, 1.0, "#e6f4ea"),
    Box("driver", "Ray driver", "eviseek eval --backend ray:\ncommits every episode", 0.0, -5.2, 2.8, 1.3),
    Box("node1", "Ray node", "actors: agents, model\nclient, environments", 4.6, -4.4, 3.0, 1.1, "#f0eafa"),
    Box(
        "node2",
        "Ray node (GPU)",
        "actors placed by the\nresources an env declares",
        4.6,
        -6.0,
        3.0,
        1.1,
        "#f0eafa",
    ),
]
SCALE_ARROWS = [
    ("harness", "env1", "HTTP + token"),
    ("harness", "env2", ""),
    ("harness", "model", "model calls"),
    ("driver", "node1", "episodes"),
    ("driver", "node2", ""),
    ("node1", "model", ""),
]


def draw_scale(out: Path) -> None:
    """Remote env servers (top) and Ray nodes (bottom) around the harness and the model server."""
    fig = _boxes_and_arrows(SCALE, SCALE_ARROWS, (7.6, 7.6), (-1.7, 6.3, -6.8, 2.2))
    ax = fig.axes[0]
    caption = {"fontsize": 9, "style": "italic", "color": "#2b4c6f"}
    ax.text(-1.5, 1.95, "--env-url: simulators on other machines", **caption)
    ax.plot([-1.6, 6.2], [-3.45, -3.45], color="#9aa9b8", linewidth=0.8, linestyle="--")
    ax.text(-1.5, -3.75, "--backend ray: episodes spread over a cluster", **caption)
    _save(fig, out, title="Harness, env servers and Ray nodes", source="scripts/docs_charts.py SCALE")


DIAGRAMS = {"eviseek-loop.svg": draw_loop, "run-directory.svg": draw_run_dir, "scale-out.svg": draw_scale}


# ------------------------------------------------------------------------------- chart slots


def chart_alt(results: ResultsFile) -> str:
    """The alt text of a chart: what it shows, read from its results file."""
    level = "task family" if results.slice_level == "family" else "question kind"
    agents = ", ".join(a.label for a in results.agents)
    pct = round(100 * results.confidence)
    return f"{results.name}: accuracy and C per {level} for {agents}, with {pct}% bootstrap intervals"


def fill_chart_slots(page: Path, charts: Path, alts: dict[str, str]) -> list[str]:
    """Make each ``<!-- chart: NAME -->`` slot of ``page`` show ``charts/NAME.svg`` if it exists
    (the line after the marker), and no image of it if it does not. Returns what changed."""
    prefix = Path(os.path.relpath(charts.resolve(), page.parent.resolve())).as_posix()
    lines = page.read_text(encoding="utf-8").split("\n")
    out: list[str] = []
    changes: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        slot = CHART_SLOT.match(line.strip())
        if slot is None:
            continue
        name = slot.group(1)
        target = f"{prefix}/{name}.svg"
        shown = i < len(lines) and lines[i].startswith("![") and lines[i].rstrip().endswith(f"]({target})")
        if (charts / f"{name}.svg").is_file():
            if not shown:
                out.append(f"![{alts.get(name, name)}]({target})")
                if i < len(lines) and lines[i].strip():
                    out.append("")  # the image stands apart from the text after it
                changes.append(f"{page}: shows {target}")
        elif shown:
            i += 1  # the chart is gone: drop its image line, keep the slot
            changes.append(f"{page}: no longer shows {target} (no such chart)")
    if changes:
        page.write_text("\n".join(out), encoding="utf-8")
    return changes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder of results files (NAME.json)")
    parser.add_argument("--out", type=Path, default=IMAGES, help="folder for charts/ and diagrams/")
    parser.add_argument(
        "--pages",
        type=Path,
        nargs="*",
        default=list(PAGES),
        help="Markdown pages whose <!-- chart: NAME --> slots to fill (default: docs/results.md, README.md)",
    )
    args = parser.parse_args(argv)
    files = sorted(args.results.glob("*.json"))
    if not files:
        print(
            f"error: no results file (*.json) in {args.results}; write one with scripts/results_file.py",
            file=sys.stderr,
        )
        return 1
    written: list[Path] = []
    alts: dict[str, str] = {}
    for path in files:
        try:
            results = read_results_file(path)
        except ValueError as exc:
            print(f"error: {path} is not a results file ({str(exc).splitlines()[0]})", file=sys.stderr)
            return 2
        target = args.out / "charts" / f"{path.stem}.svg"
        draw_results_chart(results, path, target)
        written.append(target)
        alts[path.stem] = chart_alt(results)
    for name, draw in DIAGRAMS.items():
        target = args.out / "diagrams" / name
        draw(target)
        written.append(target)
    for p in written:
        print(f"wrote {p} ({p.stat().st_size // 1024} KiB)")
    for page in args.pages:
        if not page.is_file():
            print(f"error: no page {page} (--pages)", file=sys.stderr)
            return 1
        for change in fill_chart_slots(page, args.out / "charts", alts):
            print(change)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Write the committed summary of a finished run (docs/results/NAME.json) from its run directory.

The documentation's charts and the numbers its pages quote are read from these files
(``eviseek.eval.results_file``). After a rerun, write the file again, then redraw the charts:

    .venv/bin/python scripts/results_file.py runs/tabletop-paper-reference --name tabletop:paper \\
        --label passive=Passive --label blind=Blind ... --command "eviseek eval ..."
    .venv/bin/python scripts/docs_charts.py

``--preset tabletop:paper`` and ``--preset house:test`` fill in the slice level, the C metric,
the agents' labels and the commands given on the results page. The slices are whatever task
families or question kinds the run holds, so a new set of house kinds needs no change here.

The houses, after a complete run of ``house:test`` (judged, since C is EXPRESS-Bench's):

    eviseek judge runs/house-test --protocol express --model reference
    .venv/bin/python scripts/results_file.py runs/house-test --preset house:test --commit SHA
    .venv/bin/python scripts/docs_charts.py    # draws the chart and shows it on both pages

The last command puts the chart's image into the ``<!-- chart: house-test -->`` slots of
docs/results.md and README.md; ``tests/docs/test_charts.py`` then requires it there.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from eviseek.eval.results_file import summarize_run  # noqa: E402

LABELS = {
    "passive": "Passive",
    "blind": "Blind",
    "single-model": "Single-model",
    "eviseek": "EviSeek",
    "eviseek:paper": "EviSeek paper-exact",
    "eviseek-nav": "EviSeek (nav.)",
    "frontier": "Frontier (Fine-EQA-style)",
}
PRESETS: dict[str, dict[str, str]] = {
    "tabletop:paper": {
        "slice_level": "family",
        "c_metric": "support",
        "command": "eviseek eval --agents passive,blind,single-model,eviseek,eviseek:paper "
        "--model reference --dataset tabletop:paper --out runs/tabletop-paper --concurrency 2",
    },
    "house:test": {
        "slice_level": "subcategory",
        "c_metric": "express",
        "command": "eviseek house generate --split test --out sets/house-test && "
        "eviseek eval --out runs/house-test --dataset sets/house-test/questions.jsonl --budget 120 -c 2 "
        "--agents blind,passive,single-model,eviseek-nav,frontier --model reference && "
        "eviseek judge runs/house-test --protocol express --model reference",
    },
}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a finished run directory")
    parser.add_argument("--preset", choices=sorted(PRESETS), help="the settings of a split the site shows")
    parser.add_argument("--name", help="the split as pages name it (default: the preset)")
    parser.add_argument("--slice-level", choices=["family", "subcategory"])
    parser.add_argument("--c-metric", choices=["support", "express"])
    parser.add_argument("--label", action="append", default=[], help="AGENT=LABEL (repeatable)")
    parser.add_argument("--command", help="the commands that made the run")
    parser.add_argument("--commit", help="the commit the run was made at (default: the checkout's HEAD)")
    parser.add_argument("--out", type=Path, help="default: docs/results/NAME.json (':' becomes '-')")
    args = parser.parse_args()
    preset = PRESETS.get(args.preset or "", {})
    name = args.name or args.preset
    if not name:
        parser.error("give --preset or --name")
    slice_level = args.slice_level or preset.get("slice_level")
    c_metric = args.c_metric or preset.get("c_metric")
    if slice_level is None or c_metric is None:
        parser.error("give --slice-level and --c-metric (or a --preset)")
    labels = dict(LABELS)
    for item in args.label:
        agent, sep, label = item.partition("=")
        if not sep:
            parser.error(f"--label takes AGENT=LABEL, got {item!r}")
        labels[agent] = label
    if not args.run_dir.is_dir():
        print(f"error: no run directory at {args.run_dir}", file=sys.stderr)
        return 1
    try:
        results = summarize_run(
            args.run_dir,
            name=name,
            slice_level=slice_level,
            c_metric=c_metric,
            labels=labels,
            command=args.command or preset.get("command", ""),
        )
        if args.commit:
            results = results.model_copy(update={"commit": args.commit})
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    out = args.out or ROOT / "docs" / "results" / f"{name.replace(':', '-')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(results.model_dump_json(indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(results.agents)} agents, {results.n_questions} questions")
    # What the pages' tables quote (tests/docs/test_charts.py checks the quotes against the file).
    for agent in results.agents:
        c = "—" if agent.overall.C is None else f"{agent.overall.C.value:.1f}"
        print(f"  {agent.agent} ({agent.label}): accuracy {agent.overall.accuracy.value:.1f}, C {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

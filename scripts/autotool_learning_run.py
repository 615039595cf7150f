"""AutoTool's CPU-scale learning run: warm-up, GRPO variants, held-out evaluation, Markdown report.

    python scripts/autotool_learning_run.py                       # everything, then the report
    python scripts/autotool_learning_run.py --variants autotool   # the main run only
    python scripts/autotool_learning_run.py --report-only         # rebuild the report from saved results

Stage 1 fits a tiny random Qwen3-VL on synthetic traces of both modes (tag-grid task, see
``eviseek.train.tag_grid``) and saves it under ``OUT/warm``; it is evaluated on held-out
questions with its mode free and with each mode forced. Stage 2 runs GRPO from that model once
per variant, through the same TRL code path as ``eviseek train autotool`` (one preset of
``eviseek.train.presets`` each): ``autotool`` (MSPO + AMB + release, the main run) and the
ablations ``no_amb``, ``no_penalty``, ``always_tool`` and ``text_only``. Variants run as
separate processes, ``--jobs`` at a time, each on one torch thread; a finished variant
(``OUT/<name>/result.json``) is not run again. The report goes to ``--report`` with its plots
in a folder of the same name.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VARIANTS = ("autotool", "no_amb", "no_penalty", "always_tool", "text_only")


def _heldout(args: argparse.Namespace) -> list:
    from eviseek.train.autotool_config import load_config
    from eviseek.train.tag_grid import TagGridConfig, tag_grid_rows

    cfg = load_config(args.config, _overrides(args))
    assert cfg.data.tag_grid is not None, "the learning run uses tag_grid data"
    t = cfg.data.tag_grid
    grid = TagGridConfig(**t.model_dump(exclude={"n", "seed"}))
    # A different seed from training: row seeds never overlap (see tag_grid_rows).
    seed = t.seed + 1
    warm = cfg.warmup.data.tag_grid if cfg.warmup.data is not None else None
    if warm is not None and warm.seed == seed:
        sys.exit(f"warmup.data.tag_grid.seed {seed} is also the held-out seed (data.tag_grid.seed + 1)")
    check = cfg.warmup.crop_check.data.tag_grid if cfg.warmup.crop_check is not None else None
    if check is not None and check.seed in (seed, t.seed, warm.seed if warm is not None else t.seed):
        sys.exit(f"warmup.crop_check.data.tag_grid.seed {check.seed} is also a training or held-out seed")
    return tag_grid_rows(args.heldout, seed=seed, config=grid)


def stage_one(args: argparse.Namespace) -> bool:
    """Warm up (unless ``OUT/warm`` already holds a warmed model) and evaluate; whether it warmed up."""
    from autotool_learning.run import evaluate_saved, warm_start

    from eviseek.train.autotool_config import load_config
    from eviseek.train.trl_autotool.run import load_model_and_processor

    warm = args.out / "warm"
    ran = not (warm / "warmup.json").is_file()
    if ran:
        start = time.perf_counter()

        def progress(model: object, processor: object, steps: int) -> None:
            if steps % 100 == 0:
                print(f"warm-up step {steps} at {time.perf_counter() - start:.0f} s", flush=True)

        report = warm_start(load_config(args.config, _overrides(args)), warm, on_step=progress)
        seconds = time.perf_counter() - start
        print(f"warm-up: {report.steps} steps in {seconds:.0f} s, loss {report.losses[-1]:.3f}")
    if not (warm / "heldout.json").is_file():
        over = {**_overrides(args), "tiny_model": None, "model": str(warm), "warmup.steps": 0}
        cfg = load_config(args.config, over)
        model, processor, _ = load_model_and_processor(cfg)
        from autotool_learning.run import Evaluation, write_prompts

        rows = _heldout(args)
        write_prompts(warm / "heldout_prompts.jsonl", cfg, processor, rows)
        ev: Evaluation = evaluate_saved(cfg, model, processor, rows, forced=True)
        (warm / "heldout.json").write_text(ev.model_dump_json(indent=2), encoding="utf-8")
        print(f"warm-up model held-out: {json.dumps(ev.free.stats)}")
    return ran


def one_variant(args: argparse.Namespace, name: str) -> None:
    from autotool_learning.run import run_variant, variant_config

    overrides = _overrides(args)
    if name != "autotool" and args.ablation_steps:
        overrides["grpo.max_steps"] = args.ablation_steps
    cfg = variant_config(args.config, args.out / "warm", args.out / name, preset=name, overrides=overrides)
    result = run_variant(name, cfg, _heldout(args), preset=name)
    assert result.heldout is not None
    stats = json.dumps(result.heldout.free.stats)
    print(f"{name}: {result.steps} steps in {result.train_seconds:.0f} s; held-out {stats}")


def seed_overrides(seed: int) -> list[str]:
    """``--set`` items of one learning-run seed: the tiny model's init and every data seed change
    together. Seed ``s``: model init ``s``, GRPO seed ``s``, warm-up questions ``10s``, crop check
    ``10s + 1``, GRPO questions ``10s + 2`` (held-out questions ``10s + 3``). Seed 0 is the
    committed config's own."""
    return [
        f"tiny_model.seed={seed}",
        f"grpo.seed={seed}",
        f"warmup.data.tag_grid.seed={10 * seed}",
        f"warmup.crop_check.data.tag_grid.seed={10 * seed + 1}",
        f"data.tag_grid.seed={10 * seed + 2}",
    ]


def _overrides(args: argparse.Namespace) -> dict:
    out: dict = {}
    for item in args.set:
        key, _, value = item.partition("=")
        out[key] = json.loads(value) if value[:1] in "[{0123456789-tfn" else value
    return out


def run_variants(args: argparse.Namespace, names: list[str]) -> None:
    todo = [n for n in names if not (args.out / n / "result.json").is_file()]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    running: list[tuple[str, subprocess.Popen, float]] = []
    failed = []
    while todo or running:
        while todo and len(running) < args.jobs:
            name = todo.pop(0)
            cmd = [
                sys.executable,
                __file__,
                "--one",
                name,
                "--out",
                str(args.out),
                "--config",
                str(args.config),
            ]
            cmd += ["--heldout", str(args.heldout), "--ablation-steps", str(args.ablation_steps)]
            for item in args.set:
                cmd += ["--set", item]
            (args.out / name).mkdir(parents=True, exist_ok=True)
            log = open(args.out / name / "run.log", "w")  # noqa: SIM115 - closed with the process
            running.append(
                (name, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env), time.time())
            )
            print(f"started {name}")
        time.sleep(5)
        for item in list(running):
            name, proc, t0 = item
            if proc.poll() is not None:
                running.remove(item)
                print(f"{name}: exit {proc.returncode} after {time.time() - t0:.0f} s")
                if proc.returncode:
                    failed.append(name)
    if failed:
        raise SystemExit(f"variants failed: {', '.join(failed)} (see {args.out}/<name>/run.log)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", type=Path, default=ROOT / "examples/configs/autotool_learning_run.yaml")
    p.add_argument("--out", type=Path, default=ROOT / "runs/autotool-learning")
    p.add_argument("--report", type=Path, default=ROOT / "docs/autotool_learning.md")
    p.add_argument("--variants", default=",".join(DEFAULT_VARIANTS))
    p.add_argument(
        "--ablation-steps", type=int, default=0, help="GRPO steps of each ablation (0: as the main run)"
    )
    p.add_argument("--heldout", type=int, default=64, help="held-out questions")
    p.add_argument("--jobs", type=int, default=2, help="variants run at once (one torch thread each)")
    p.add_argument("--set", action="append", default=[], help="config override KEY=VALUE (repeatable)")
    p.add_argument(
        "--seed", type=int, help="run seed S: model init and all data seeds together (see seed_overrides)"
    )
    p.add_argument(
        "--seeds-table",
        help="S1,S2,...: write only the across-seeds table of runs OUT/s<S> (made with --seed S "
        "--out OUT/s<S>) to --report",
    )
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--one", help=argparse.SUPPRESS)
    args = p.parse_args()
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stdout)
    if args.seed is not None:
        args.set = seed_overrides(args.seed) + args.set
        args.seed = None  # passed on to variant processes as the --set items
    if args.one:
        one_variant(args, args.one)
        return
    if args.seeds_table:
        write_seeds_table(args)
        return
    if not args.report_only:
        start, load0 = time.time(), os.getloadavg()[0]
        warmed = stage_one(args)
        run_variants(args, [v for v in args.variants.split(",") if v])
        _write_run_time(args.out, start, load0, warmed)
    from autotool_learning.report import write_report

    path = write_report(args.out, args.report, command=_command(args), notes=_notes(args))
    print(f"report: {path}")


def write_seeds_table(args: argparse.Namespace) -> None:
    """The across-seeds table (``learning_report.seeds_table``) with each seed's run time."""
    from autotool_learning.report import seeds_table

    seeds = [int(s) for s in args.seeds_table.split(",") if s]
    runs = {s: args.out / f"s{s}" for s in seeds}
    lines = ["| seed | run time | load average (start, end) |", "|---|---|---|"]
    for s, path in runs.items():
        t = path / "run_time.json"
        if t.is_file():
            r = json.loads(t.read_text(encoding="utf-8"))
            lines.append(
                f"| {s} | {r['wall_seconds'] / 60:.1f} min wall, {r['cpu_seconds'] / 60:.1f} min CPU | "
                f"{r['load_average_start']:.1f}, {r['load_average_end']:.1f} |"
            )
        else:
            lines.append(f"| {s} | did not finish | |")
    text = "\n".join([*seeds_table(runs), "", *lines]) + "\n"
    args.report.write_text(text, encoding="utf-8")
    print(f"seeds table: {args.report}")


def _write_run_time(out: Path, start: float, load0: float, warmed: bool) -> None:
    """Wall and CPU time of this invocation (this process and every variant process it waited for)."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
    record = {
        "wall_seconds": time.time() - start,
        "cpu_seconds": cpu,
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(start)),
        "load_average_start": load0,
        "load_average_end": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "warmup_ran": warmed,
    }
    (out / "run_time.json").write_text(json.dumps(record, indent=2), encoding="utf-8")


def _command(args: argparse.Namespace) -> str:
    """The command that reproduces the results (where they are written is left at its default)."""
    parts = ["python scripts/autotool_learning_run.py"]
    if args.config.resolve() != (ROOT / "examples/configs/autotool_learning_run.yaml").resolve():
        parts.append(f"--config {args.config}")
    if args.variants != ",".join(DEFAULT_VARIANTS):
        parts.append(f"--variants {args.variants}")
    parts += [f"--heldout {args.heldout}", f"--ablation-steps {args.ablation_steps}", f"--jobs {args.jobs}"]
    parts += [f"--set {item}" for item in args.set]
    return " ".join(parts)


def _notes(args: argparse.Namespace) -> list[str]:
    text = (args.config).read_text(encoding="utf-8")
    return [
        f"Config: `{args.config.relative_to(ROOT) if args.config.is_relative_to(ROOT) else args.config}`; "
        f"{args.heldout} held-out questions; "
        f"ablations at {args.ablation_steps or 'the same number of'} GRPO steps.",
        "",
        "<details><summary>config</summary>",
        "",
        "```yaml",
        text.strip(),
        "```",
        "",
        "</details>",
    ]


if __name__ == "__main__":
    main()

"""Seconds per GRPO step of the tiny Qwen3-VL with the zoom tool (TRL, CPU).

Run: ``python benchmarks/grpo_step.py`` (``--steps N``, ``--quick`` for fewer steps).

The run uses ``examples/configs/autotool_trl_tiny.yaml`` (4 synthetic questions, 2 rollouts
each per step: 2 questions x 2 rollouts = 4 completions a step, zoom tool, MSPO rewards, AMB),
with the warm-up on so the policy really calls the tool. A step is timed from
``on_step_begin`` to ``on_step_end`` of a trainer callback: generation with the tool loop,
rewards, the forward and backward passes and the optimizer step. The median and the range of
the steps are printed, with the zoom calls and the crops that reached completions.

Torch's thread count matters on a small shared CPU, so the same run is repeated with torch's
default thread count and with one thread, side by side in this process, and their ratio is
printed (``--threads-only N`` runs one setting).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run(threads: int | None, steps: int, warmup_steps: int, out: Path) -> dict[str, Any]:
    import torch

    from eviseek.train.autotool_config import load_config
    from eviseek.train.trl_autotool import build_trainer

    overrides: dict[str, Any] = {
        "grpo.max_steps": steps,
        "amb.release_step": max(1, steps - 1),
        "warmup.steps": warmup_steps,
        "output_dir": str(out),
    }
    default_threads = torch.get_num_threads()
    overrides["torch_threads"] = threads if threads is not None else default_threads
    cfg = load_config(ROOT / "examples" / "configs" / "autotool_trl_tiny.yaml", overrides)
    built = time.perf_counter()
    trainer_run = build_trainer(cfg)
    build_s = time.perf_counter() - built

    import transformers

    times: list[float] = []

    class Timer(transformers.TrainerCallback):  # type: ignore[misc]
        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            self.t = time.perf_counter()
            return control

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            times.append(time.perf_counter() - self.t)
            return control

    trainer_run.trainer.add_callback(Timer())
    summary = trainer_run.train(save=False)
    torch.set_num_threads(default_threads)
    return {
        "threads": overrides["torch_threads"],
        "build_s": build_s,
        "warmup_s": summary.warmup.seconds,
        "step_s": times,
        "median_s": statistics.median(times),
        "tool_calls": summary.tool_calls,
        "crops_in_completions": summary.crops_in_completions,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="4 steps per setting")
    parser.add_argument("--warmup-steps", type=int, default=100)
    parser.add_argument("--threads-only", type=int, default=None, help="time only this thread count")
    parser.add_argument("--out", type=Path, default=Path("/tmp/eviseek-grpo-bench"))
    args = parser.parse_args(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    steps = 4 if args.quick else args.steps
    import torch

    settings = [args.threads_only] if args.threads_only else [torch.get_num_threads(), 1]
    results = []
    for threads in dict.fromkeys(settings):  # keeps order, drops a duplicate "1"
        r = run(threads, steps, args.warmup_steps, args.out / f"threads{threads}")
        results.append(r)
        print(
            f"torch threads={r['threads']}: {r['median_s']:.3f} s per GRPO step "
            f"(median of {len(r['step_s'])}; min {min(r['step_s']):.3f}, max {max(r['step_s']):.3f}); "
            f"warm-up {r['warmup_s']:.1f} s; "
            f"zoom calls {r['tool_calls']}, crops in completions {r['crops_in_completions']}",
            flush=True,
        )
    if len(results) == 2:
        a, b = results
        # The warm-up does identical work under both settings; GRPO steps do not (the sampled
        # rollouts, hence tool calls and lengths, change with the thread count's numerics).
        print(
            f"time ratio threads={a['threads']} / threads=1: warm-up {a['warmup_s'] / b['warmup_s']:.2f}x "
            f"(same work), GRPO step median {a['median_s'] / b['median_s']:.2f}x (rollouts differ)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

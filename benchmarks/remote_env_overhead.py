"""Remote environment overhead: tabletop step+render locally and through ``eviseek env serve``.

One run, side by side: the same camera actions on the same question, on a local ``TabletopEnv``
and on a ``RemoteEnv`` whose server (an ``EnvServer`` on 127.0.0.1, in this process's threads)
hosts the same environment, with PNG and with raw images. Each step renders a new frame, so the
ratio is what the HTTP round trip and the image transfer add to a real step.

    python benchmarks/remote_env_overhead.py [--steps 60] [--size 320x240]

``--cli`` measures the same through the CLI, as a user runs it: ``eviseek eval`` of the
Single-model agent with the reference policy on ``tabletop:dev`` questions, one episode at a
time, with the simulator in a local env worker and behind ``eviseek env serve`` (a subprocess on
127.0.0.1) with each ``--env-images``; the run's own time (the CLI's summary line), the best of
``--repeats`` interleaved runs, so load from other processes hurts every variant alike.

    python benchmarks/remote_env_overhead.py --cli [--limit 6] [--repeats 2]
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eviseek.envs.base import Env
from eviseek.envs.registry import make
from eviseek.envs.remote import RemoteEnv, serve_registered
from eviseek.types import Action

ACTIONS = ["turn_left", "turn_right", "move_left", "move_right", "move_up", "move_down"]


def _time_steps(env: Env, question: object, steps: int) -> list[float]:
    times = []
    done = 0
    while done < steps:
        env.reset(seed=0, options={"question": question})
        for i in range(min(20, steps - done)):  # under the 30-step budget of an episode
            start = time.perf_counter()
            env.step(Action(name=ACTIONS[i % len(ACTIONS)]))
            times.append(time.perf_counter() - start)
            done += 1
    return times


def _cli_run(extra: list[str], limit: int, env: dict[str, str]) -> tuple[float, int]:
    """One ``eviseek eval`` run: the run's seconds from its summary line, and its steps."""
    from eviseek.eval.store import load_results

    with tempfile.TemporaryDirectory(prefix="eviseek-remote-cli-") as tmp:
        cmd = [
            sys.executable, "-m", "eviseek", "eval", "--agents", "single-model", "--model", "reference",
            "--dataset", "tabletop:dev", "--limit", str(limit), "--concurrency", "1", "--env-workers", "1",
            "--no-progress", "--out", str(Path(tmp) / "run"), *extra,
        ]  # fmt: skip
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        found = re.search(r"episode\(s\) run, .*?; ([0-9.]+)s\.", out.stdout)
        if out.returncode != 0 or not found:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
        steps = sum(r.steps for r in load_results(Path(tmp) / "run"))
        return float(found.group(1)), steps


def cli_main(limit: int, repeats: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.envs.remote.serving import serve_cli

    token = secrets.token_hex(16)
    env = {**os.environ, "EVISEEK_ENV_TOKEN": token}
    proc, url = serve_cli("--env", "eviseek/Tabletop-v0", env=env)
    variants = {
        "local (env worker)": [],
        **{
            f"--env-url, {images} images": ["--env-url", url, "--env-images", images]
            for images in ("raw", "png", "jpeg")
        },
    }
    best: dict[str, tuple[float, int]] = {}
    try:
        _cli_run([], 1, env)  # warm-up: generates the split once, loads what the first run loads
        for _ in range(repeats):
            for label, extra in variants.items():
                took = _cli_run(extra, limit, env)
                if label not in best or took[0] < best[label][0]:
                    best[label] = took
    finally:
        proc.kill()
        proc.wait(timeout=10)
    base = best["local (env worker)"][0]
    print(
        f"eviseek eval, Single-model + reference policy, {limit} tabletop:dev questions one at a time, "
        f"best of {repeats}; load now {os.getloadavg()[0]:.1f}"
    )
    for label, (seconds, steps) in best.items():
        print(f"  {label:26s} {seconds:7.2f} s  {steps:4d} steps  {seconds / base:5.2f}x local")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--size", default="320x240", help="render size WIDTHxHEIGHT")
    parser.add_argument("--cli", action="store_true", help="through eviseek eval (see above)")
    parser.add_argument("--limit", type=int, default=6, help="--cli: questions per run")
    parser.add_argument("--repeats", type=int, default=2, help="--cli: runs of each variant")
    args = parser.parse_args()
    if args.cli:
        cli_main(args.limit, args.repeats)
        return
    width, height = (int(v) for v in args.size.lower().split("x"))
    from eviseek.envs.tabletop import sample_question

    question = sample_question(1)
    env_args = {"width": width, "height": height}
    token = secrets.token_hex(16)
    local = make("eviseek/Tabletop-v0", **env_args)
    _time_steps(local, question, 5)  # warm-up: build the scene once
    rows = [("local TabletopEnv", statistics.median(_time_steps(local, question, args.steps)))]
    local.close()
    with serve_registered("eviseek/Tabletop-v0", env_args, token=token) as server:
        for images in ("png", "raw", "jpeg"):
            remote = RemoteEnv(server.url, token=token, images=images)
            _time_steps(remote, question, 5)
            rows.append(
                (f"remote, {images} images", statistics.median(_time_steps(remote, question, args.steps)))
            )
            remote.close()
    base = rows[0][1]
    print(f"tabletop step+render at {width}x{height}, median of {args.steps} steps (server on 127.0.0.1)")
    for label, median in rows:
        print(f"  {label:22s} {1000 * median:7.2f} ms/step   {median / base:5.2f}x local")


if __name__ == "__main__":
    main()

"""Remote environment overhead: tabletop step+render locally and through ``eviseek env serve``.

One run, side by side: the same camera actions on the same question, on a local ``TabletopEnv``
and on a ``RemoteEnv`` whose server (an ``EnvServer`` on 127.0.0.1, in this process's threads)
hosts the same environment, with PNG and with raw images. Each step renders a new frame, so the
ratio is what the HTTP round trip and the image transfer add to a real step.

    python benchmarks/remote_env_overhead.py [--steps 60] [--size 320x240]
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import time

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--size", default="320x240", help="render size WIDTHxHEIGHT")
    args = parser.parse_args()
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
        for images in ("png", "raw"):
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

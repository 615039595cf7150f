"""House environment speed: step+render of a 6-room house on one core at 320x240 and at another
size (default 512x512, EXPRESS-Bench's frames), side by side, each with a bare render of the same
frame.

    python benchmarks/house_speed.py [--steps 120] [--size 512x512]

Goals: at least 30 steps per second of CPU time at 512x512 (issue 38; issue 11 set it at
320x240), and a full ``step`` costs at most 1.25x a bare PyBullet render of the same frame. The
process is pinned to one core. Each step is followed by a bare render of the frame it produced
(the exact ``getCameraImage`` call a step makes, with nothing around it), so both see the same
load; the median of each is reported, in wall time and in the process's CPU time (which other
processes on a shared machine do not inflate), with the ratio to the 320x240 step.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from eviseek.envs import view
from eviseek.envs.house import HouseEnv, build_question
from eviseek.envs.house.sim import FAR, LIGHT
from eviseek.types import Action, Question

# A walk that turns and moves (moves run the collision test; some bump into walls).
PATTERN = ["move_forward", "move_forward", "turn_left", "move_forward", "turn_right", "turn_right"]


def bare_render(env: HouseEnv) -> None:
    """Exactly the PyBullet call a step makes for its frame, with nothing around it."""
    sim = env._sim
    assert sim is not None
    p = sim.p
    p.getCameraImage(
        env.width,
        env.height,
        viewMatrix=view.view_matrix(env.pose),
        projectionMatrix=view.projection_matrix(sim.vfov, env.width, env.height, far=FAR),
        renderer=p.ER_TINY_RENDERER,
        lightDirection=list(LIGHT.direction),
        lightColor=list(LIGHT.color),
        lightAmbientCoeff=LIGHT.ambient,
        lightDiffuseCoeff=LIGHT.diffuse,
        lightSpecularCoeff=LIGHT.specular,
        shadow=int(LIGHT.shadow),
        physicsClientId=sim.client,
    )


def measure(question: Question, width: int, height: int, steps: int) -> dict[str, dict[str, float]]:
    """Median seconds per step and per bare render at ``width`` x ``height``, by clock."""
    env = HouseEnv(width=width, height=height, max_steps=10 * steps + 10)
    env.reset(options={"question": question})
    wall: dict[str, list[float]] = {"step": [], "bare": []}
    cpu: dict[str, list[float]] = {"step": [], "bare": []}
    for i in range(steps):
        w0, c0 = time.perf_counter(), time.process_time()
        env.step(Action(name=PATTERN[i % len(PATTERN)]))
        w1, c1 = time.perf_counter(), time.process_time()
        bare_render(env)
        w2, c2 = time.perf_counter(), time.process_time()
        wall["step"].append(w1 - w0)
        wall["bare"].append(w2 - w1)
        cpu["step"].append(c1 - c0)
        cpu["bare"].append(c2 - c1)
    env.close()
    return {
        clock: {k: statistics.median(v) for k, v in d.items()} for clock, d in (("wall", wall), ("cpu", cpu))
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--size", default="512x512", help="frame WIDTHxHEIGHT to compare with 320x240")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    question = build_question("long_term_navigation", 0, 0, n_rooms=6)
    base = measure(question, 320, 240, args.steps)
    big = measure(question, width, height, args.steps)
    print(
        f"house: {question.id}, 6 rooms, TinyRenderer, one core, median over {args.steps} steps; "
        f"cpu = this process's CPU time"
    )
    head = ("clock", "size", "step ms", "bare ms", "steps/s", "step/bare", "x 320x240")
    print(" ".join(f"{h:>{w}}" for h, w in zip(head, (5, 9, 8, 8, 8, 10, 10), strict=True)))
    for clock in ("wall", "cpu"):
        for label, m in (("320x240", base), (args.size, big)):
            s, b = m[clock]["step"], m[clock]["bare"]
            ratio = s / base[clock]["step"]
            cells = f"{1000 * s:>8.2f} {1000 * b:>8.2f} {1 / s:>8.1f} {s / b:>10.3f} {ratio:>10.2f}"
            print(f"{clock:>5} {label:>9} {cells}")
    print("goals: >= 30 steps/s of CPU time at 512x512; a step <= 1.25x a bare render")


if __name__ == "__main__":
    main()

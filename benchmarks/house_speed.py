"""House environment speed: step+render of a 6-room house at 320x240 on one core, side by side
with a bare render of the same frame.

    python benchmarks/house_speed.py [--steps 120]

Goals (issue 11): at least 30 steps per second, and a full ``step`` costs at most 1.25x a bare
PyBullet render of the same frame. The process is pinned to one core. Each step is followed by
a bare render of the frame it produced (the exact ``getCameraImage`` call a step makes, with
nothing around it), so both see the same load; the median of each is reported, in wall time and
in this thread's CPU time (which other processes on a shared machine do not inflate).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from eviseek.envs import view
from eviseek.envs.house import HouseEnv, build_question
from eviseek.envs.house.sim import FAR, LIGHT
from eviseek.types import Action

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=120)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    question = build_question("long_term_navigation", 0, 0, n_rooms=6)
    n_bodies = len(question.scene["rooms"]) + len(question.scene["walls"]) + len(question.scene["items"])
    env = HouseEnv(width=320, height=240, max_steps=10 * args.steps + 10)
    env.reset(options={"question": question})
    sim = env._sim
    assert sim is not None
    # Drawn pieces: every body's base shape, or its links when it is built from parts.
    n_parts = sum(max(1, sim.p.getNumJoints(uid, physicsClientId=sim.client)) for uid in sim.uid.values())
    wall = {"step": [], "bare": []}
    cpu = {"step": [], "bare": []}
    bumps = 0
    for i in range(args.steps):
        w0, c0 = time.perf_counter(), time.thread_time()
        res = env.step(Action(name=PATTERN[i % len(PATTERN)]))
        w1, c1 = time.perf_counter(), time.thread_time()
        bare_render(env)
        w2, c2 = time.perf_counter(), time.thread_time()
        bumps += not res.feedback.success
        wall["step"].append(w1 - w0)
        wall["bare"].append(w2 - w1)
        cpu["step"].append(c1 - c0)
        cpu["bare"].append(c2 - c1)
    env.close()
    print(
        f"house: {question.id}, 6 rooms, {n_bodies} spec bodies drawn as {len(sim.uid)} bodies of "
        f"{n_parts} parts, 320x240 TinyRenderer, one core, "
        f"median over {args.steps} steps ({bumps} bumped into something)"
    )
    print(f"{'clock':>6} {'step ms':>8} {'bare ms':>8} {'step fps':>9} {'step/bare':>10}")
    for label, d in (("wall", wall), ("cpu", cpu)):
        s, b = statistics.median(d["step"]), statistics.median(d["bare"])
        print(f"{label:>6} {1000 * s:>8.2f} {1000 * b:>8.2f} {1 / s:>9.1f} {s / b:>10.3f}")
    print("goals: step fps >= 30, step/bare <= 1.25")


if __name__ == "__main__":
    main()

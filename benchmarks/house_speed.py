"""House environment speed: step+render of a 6-room house at 320x240 and at another size (default
512x512, EXPRESS-Bench's frames), each with and without culling, side by side, each with a bare
render of the same frame; optionally PyBullet's EGL plugin on the same frames.

    python benchmarks/house_speed.py [--steps 120] [--size 512x512] [--egl]

Goals: at least 30 steps per second of CPU time at 512x512 (issue 38; issue 11 set it at
320x240), and a full ``step`` costs at most 1.25x a bare PyBullet render of the same frame. The
process is pinned to one core. Each step is followed by a bare render of the frame it produced
(the exact ``getCameraImage`` call a step makes, with nothing around it), so both see the same
load; the median of each is reported, in wall time and in the process's CPU time (which other
processes on a shared machine do not inflate; it counts every thread, the EGL plugin's software
rasteriser's included), with the ratio to the 320x240 step that draws every body.

``culled`` is the env as it runs (bodies the camera cannot see are parked before each render,
``envs/house/culling.py``; the same pixels); ``all`` draws every body, as before issue 38.
``--egl`` adds a bare render through PyBullet's EGL plugin (on a machine without a GPU, Mesa's
llvmpipe) of the same poses in a second client that loaded the plugin before building the house:
a plugin loaded after the bodies exist draws none of them, which makes it look cheap.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import time

from eviseek.envs import view
from eviseek.envs.house import HouseEnv, build_question
from eviseek.envs.house.limits import checked_house
from eviseek.envs.house.sim import FAR, LIGHT, HouseSim
from eviseek.types import Action, Pose, Question

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


class EglWorld:
    """The same house in a client that renders through PyBullet's EGL plugin (bare renders only)."""

    def __init__(self, question: Question, width: int, height: int) -> None:
        spec = checked_house(question.scene, question.id)
        self.sim = HouseSim(spec, width=width, height=height, cull=False)
        p, c = self.sim.p, self.sim.client
        plugin = importlib.util.find_spec("eglRenderer")
        if plugin is None or plugin.origin is None:
            raise SystemExit("error: this PyBullet has no eglRenderer module; run without --egl")
        if p.loadPlugin(plugin.origin, "_eglRendererPlugin", physicsClientId=c) < 0:
            raise SystemExit("error: PyBullet's EGL plugin did not load; run without --egl")
        self.sim.build(spec)  # again, now that the plugin is there to draw the bodies

    def render(self, pose: Pose) -> None:
        """One EGL render of ``pose`` with its segmentation mask, as a step would need."""
        sim = self.sim
        sim.p.getCameraImage(
            sim.width,
            sim.height,
            viewMatrix=view.view_matrix(pose),
            projectionMatrix=view.projection_matrix(sim.vfov, sim.width, sim.height, far=FAR),
            renderer=sim.p.ER_BULLET_HARDWARE_OPENGL,
            physicsClientId=sim.client,
        )


def measure(
    question: Question, width: int, height: int, steps: int, *, cull: bool, egl: bool = False
) -> dict[str, dict[str, float]]:
    """Median seconds per step and per bare render (and per EGL render with ``egl``) at
    ``width`` x ``height``, by clock."""
    env = HouseEnv(width=width, height=height, max_steps=10 * steps + 10)
    env.reset(options={"question": question})
    sim = env._sim
    assert sim is not None
    if not cull:  # draw every body, as the env did before culling
        sim._culler = None
        sim._show_only(set())
    other = EglWorld(question, width, height) if egl else None
    wall: dict[str, list[float]] = {"step": [], "bare": [], "egl": []}
    cpu: dict[str, list[float]] = {"step": [], "bare": [], "egl": []}
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
        if other is not None:
            other.render(env.pose)
            wall["egl"].append(time.perf_counter() - w2)
            cpu["egl"].append(time.process_time() - c2)
    env.close()
    if other is not None:
        other.sim.close()
    return {
        clock: {k: statistics.median(v) if v else math.nan for k, v in d.items()}
        for clock, d in (("wall", wall), ("cpu", cpu))
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--size", default="512x512", help="frame WIDTHxHEIGHT to compare with 320x240")
    ap.add_argument("--egl", action="store_true", help="also time PyBullet's EGL plugin on the same poses")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    question = build_question("long_term_navigation", 0, 0, n_rooms=6)
    runs = {
        (size, mode): measure(
            question, w, h, args.steps, cull=mode == "culled", egl=args.egl and mode == "all"
        )
        for size, (w, h) in (("320x240", (320, 240)), (args.size, (width, height)))
        for mode in ("all", "culled")
    }
    base = runs[("320x240", "all")]
    print(
        f"house: {question.id}, 6 rooms, TinyRenderer, one core, median over {args.steps} steps; "
        f"cpu = this process's CPU time (all threads)"
    )
    head = ("clock", "size", "bodies", "step ms", "bare ms", "steps/s", "step/bare", "x 320 all")
    print(" ".join(f"{h:>{w}}" for h, w in zip(head, (5, 9, 7, 8, 8, 8, 10, 10), strict=True)))
    for clock in ("wall", "cpu"):
        for (label, mode), m in runs.items():
            s, b = m[clock]["step"], m[clock]["bare"]
            ratio = s / base[clock]["step"]
            cells = f"{1000 * s:>8.2f} {1000 * b:>8.2f} {1 / s:>8.1f} {s / b:>10.3f} {ratio:>10.2f}"
            print(f"{clock:>5} {label:>9} {mode:>7} {cells}")
    if args.egl:
        print("EGL plugin, bare render with segmentation, same poses (no step around it):")
        for clock in ("wall", "cpu"):
            for label in ("320x240", args.size):
                e = runs[(label, "all")][clock]["egl"]
                ratio = e / base[clock]["step"]
                cells = f"{'':>8} {1000 * e:>8.2f} {1 / e:>8.1f} {'':>10} {ratio:>10.2f}"
                print(f"{clock:>5} {label:>9} {'egl':>7} {cells}")
    print("goals: >= 30 steps/s of CPU time at 512x512; a step <= 1.25x a bare render")


if __name__ == "__main__":
    main()

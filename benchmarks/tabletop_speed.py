"""Tabletop environment speed: step+render throughput, step overhead over a bare render, reset
time and memory per environment. Everything is measured side by side in one run.

    python benchmarks/tabletop_speed.py [--steps 60] [--envs 4]

Goals (issue 3): a full ``step`` costs at most 1.25x a bare PyBullet render of the same frame;
an environment needs under 300 MB.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

from eviseek.envs.tabletop import TabletopEnv, generate_questions
from eviseek.envs.tabletop import camera as cam
from eviseek.types import Action, Question

TURNS = ["turn_left", "turn_right"]


def rss_mb() -> float:
    """Resident set size of this process in MB (Linux)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def bare_render(env: TabletopEnv) -> None:
    """Exactly the PyBullet call a step makes for its frame, with nothing around it."""
    sim = env._sim
    assert sim is not None
    p = sim.p
    light = sim.spec.light
    p.getCameraImage(
        env.width,
        env.height,
        viewMatrix=cam.view_matrix(env.pose),
        projectionMatrix=cam.projection_matrix(sim.spec.fov, env.width, env.height),
        renderer=p.ER_TINY_RENDERER,
        lightDirection=list(light.direction),
        lightColor=list(light.color),
        lightAmbientCoeff=light.ambient,
        lightDiffuseCoeff=light.diffuse,
        lightSpecularCoeff=light.specular,
        shadow=int(light.shadow),
        physicsClientId=sim.client,
    )


def egl_fps(question: Question, width: int, height: int, steps: int) -> float | None:
    """Step+render frames per second with the EGL renderer, or None where it cannot load."""
    from eviseek.errors import EnvError

    try:
        env = TabletopEnv(width=width, height=height, max_steps=10 * steps + 10, renderer="egl")
        env.reset(options={"question": question})
    except EnvError:
        return None
    times = []
    for i in range(steps):
        t0 = time.perf_counter()
        env.step(Action(name=TURNS[i % 2]))
        times.append(time.perf_counter() - t0)
    env.close()
    return 1.0 / statistics.median(times)


def measure(question: Question, width: int, height: int, steps: int) -> dict[str, float]:
    env = TabletopEnv(width=width, height=height, max_steps=10 * steps + 10)
    env.reset(options={"question": question})
    step_t: list[float] = []
    bare_t: list[float] = []
    for i in range(steps):
        # Alternate: one step, then a bare render of the frame it produced.
        t0 = time.perf_counter()
        env.step(Action(name=TURNS[i % 2]))
        t1 = time.perf_counter()
        bare_render(env)
        t2 = time.perf_counter()
        step_t.append(t1 - t0)
        bare_t.append(t2 - t1)
    resets = []
    for _ in range(5):
        t0 = time.perf_counter()
        env.reset(options={"question": question})
        resets.append(time.perf_counter() - t0)
    env.close()
    step_med, bare_med = statistics.median(step_t), statistics.median(bare_t)
    return {
        "fps": 1.0 / step_med,
        "step_ms": 1000 * step_med,
        "bare_ms": 1000 * bare_med,
        "ratio": step_med / bare_med,
        "reset_ms": 1000 * statistics.median(resets),
    }


def memory_per_env(question: Question, n: int) -> float:
    gc.collect()
    before = rss_mb()
    envs = []
    for _ in range(n):
        e = TabletopEnv()
        e.reset(options={"question": question})
        e.step(Action(name="turn_left"))
        e.visual_support([0, 1])  # builds the probe world too
        envs.append(e)
    gc.collect()
    after = rss_mb()
    for e in envs:
        e.close()
    return (after - before) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--envs", type=int, default=4)
    args = ap.parse_args()
    # A busy scene: counting questions have the most bodies.
    (question,) = generate_questions(1, 0, subcategories=["counting_with_occlusion"], render_images=False)
    n_obj = len(question.scene["objects"])
    print(f"scene: {question.id} ({n_obj} objects), TinyRenderer, median over {args.steps} steps")
    print(f"{'size':>9} {'fps':>7} {'step ms':>8} {'bare ms':>8} {'step/bare':>10} {'reset ms':>9}")
    for w, h in ((320, 240), (640, 480)):
        m = measure(question, w, h, args.steps)
        print(
            f"{w}x{h:<5} {m['fps']:>7.1f} {m['step_ms']:>8.2f} {m['bare_ms']:>8.2f} "
            f"{m['ratio']:>10.3f} {m['reset_ms']:>9.2f}"
        )
    for w, h in ((320, 240), (640, 480)):
        fps = egl_fps(question, w, h, args.steps)
        print(f"EGL renderer {w}x{h}: " + ("not available" if fps is None else f"{fps:.1f} fps"))
    print(f"memory per env (320x240, incl. probe world): {memory_per_env(question, args.envs):.1f} MB")
    print(f"process RSS: {rss_mb():.0f} MB")


if __name__ == "__main__":
    main()

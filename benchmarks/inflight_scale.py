"""Many episodes in flight: throughput and memory at concurrency 32, 128 and 256.

Each episode resets an environment, then ``--calls`` times steps it (a new frame each time)
and sends the frame to the model through the real ``openai/`` provider, then answers. The model
is the local OpenAI-compatible test server (``eviseek.testing.OpenAITestServer``) in its own
process, answering every request after a fixed ``--latency``. Environments run in
``--env-workers`` worker processes, as in a real run.

For each concurrency C, in a fresh process (so one level's memory does not carry into the next):

* throughput as a share of ideal, where ideal = C / (calls x latency) episodes per second;
* memory per in-flight episode = (peak RSS of the driver and every process below it during the
  run, minus their RSS just before it) / C. With ``--backend ray`` the driver starts a local Ray
  instance (2 CPUs: two actors, environments in their threads), whose daemons and actors are
  counted; the actors start before the measurement. The whole benchmark (model server
  included) then runs in a loopback-only network namespace (tests/netns.py; needs root), so that
  Ray binds to 127.0.0.1 rather than the machine's own interface address.

Goals (issues 18 and 29): at least 90% of ideal at C=128 and 80% at C=256 (1 s latency, 320x240
frames); under 50 MB per in-flight episode.

    python benchmarks/inflight_scale.py [--levels 32,128,256] [--latency 1.0] [--calls 3] [--backend ray]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from eviseek.envs.base import AsyncEnv, question_from_options
from eviseek.envs.registry import register
from eviseek.eval.config import RunConfig
from eviseek.eval.runner import evaluate, make_env_provider, register_agent
from eviseek.models.base import Model, generate_recorded
from eviseek.types import (
    Action,
    ActionSpec,
    AnswerContract,
    ChatMessage,
    EpisodeResult,
    Feedback,
    GenerateConfig,
    Image,
    Observation,
    Question,
    StepRecord,
    StepResult,
    Trajectory,
)

ENV_ID = "bench/Frames-v0"
SIZE = (int(os.environ.get("BENCH_FRAME_W", "320")), int(os.environ.get("BENCH_FRAME_H", "240")))


@functools.cache
def _background() -> np.ndarray:
    """The smooth gradient every scene starts from (the same for every seed: made once)."""
    w, h = SIZE
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([100 + 80 * y / h, 120 + 60 * x / w, 140 + 0 * x], axis=-1).astype(np.uint8)


def _scene(seed: int) -> np.ndarray:
    """A render-like frame: a smooth background and a few flat-coloured boxes (compresses like a
    simulator render, unlike noise). The stand-in simulator's own work, kept small (about 0.1 ms)
    so that the figures are the harness's."""
    rng = np.random.default_rng(seed)
    w, h = SIZE
    img = _background().copy()
    for _ in range(6):
        x0, y0 = int(rng.integers(0, w - 20)), int(rng.integers(0, h - 20))
        img[y0 : y0 + int(rng.integers(10, 60)), x0 : x0 + int(rng.integers(10, 60))] = rng.integers(
            0, 255, 3
        )
    return img


class FramesEnv:
    """Every step shows a new frame (a different image each time, as a camera move would)."""

    env_id = ENV_ID

    def __init__(self) -> None:
        self.frame = 0
        self.base = _scene(0)

    def _obs(self) -> Observation:
        arr = np.roll(self.base, self.frame * 7, axis=1)
        arr[0, 0, 0] = self.frame % 256
        return Observation(image=Image.from_array(arr), frame_id=self.frame)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
        q = question_from_options(options)
        self.frame = 0
        self.base = _scene(hash(q.id if q else "") % 2**32)
        return self._obs(), {}

    def step(self, action: Action) -> StepResult:
        self.frame += 1
        return StepResult(observation=self._obs(), feedback=Feedback(operation=action.name))

    def legal_actions(self) -> list[ActionSpec]:
        return [ActionSpec(name="turn_left")]

    def close(self) -> None:
        pass


register(ENV_ID, FramesEnv)


TIMELINE: dict[str, list[tuple[str, float]]] = {}
"""Per episode, when each of its awaits returned (``--timeline``)."""
TIMELINE_ON = bool(os.environ.get("BENCH_TIMELINE"))
PROFILE = bool(os.environ.get("BENCH_PROFILE"))
"""``--profile``: the driver's event-loop thread, profiled over the measured run."""


class LookAndAskAgent:
    """``calls`` times: step, send the new frame to the model; then answer with the last reply."""

    name = "look-and-ask"

    def __init__(self, calls: int = 3, **_: Any) -> None:
        self.calls = calls

    async def run(self, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0) -> Trajectory:
        # The runner imports this file again as a plugin: record into the script's own copy.
        sink = getattr(sys.modules.get("__main__"), "TIMELINE", TIMELINE)
        marks = sink.setdefault(question.id, []) if TIMELINE_ON else None
        mark = marks.append if marks is not None else (lambda _: None)
        mark(("start", time.perf_counter()))
        obs, _ = await env.reset(seed=seed, options={"question": question})
        mark(("reset", time.perf_counter()))
        traj = Trajectory(
            episode_id=question.id,
            question_id=question.id,
            agent=self.name,
            model=model.name,
            initial_image=obs.image,
        )
        text = ""
        for i in range(self.calls):
            action = Action(name="turn_left")
            res = await env.step(action)
            mark(("step", time.perf_counter()))
            obs = res.observation
            traj.steps.append(StepRecord.from_step(i + 1, action, res))
            completion, call = await generate_recorded(
                model, [ChatMessage.user(obs.image, question.text)], GenerateConfig(stage="decide")
            )
            mark(("model", time.perf_counter()))
            traj.calls.append(call)
            text = completion.text
        mark(("end", time.perf_counter()))
        traj.answer_images = [obs.image]
        traj.answer_frame_ids = [obs.frame_id]
        traj.result = EpisodeResult(question_id=question.id, agent=self.name, raw_answer=text)
        return traj


register_agent("look-and-ask", lambda **kw: LookAndAskAgent(**kw))


# -- the model server, in a process of its own ---------------------------------------------------


def serve(latency: float) -> None:
    """Run the fixed-latency server until stdin closes; print its base URL first.

    Until the test server set ``TCP_NODELAY`` each reply's body waited for the client's delayed
    ACK of its headers (40 ms), which showed here as 1.04 s model calls at 1 s latency.
    """
    from http.server import ThreadingHTTPServer

    from eviseek.testing import OpenAITestServer

    ThreadingHTTPServer.request_queue_size = 1024  # many clients connect at once
    ThreadingHTTPServer.daemon_threads = True

    class Forgetful(OpenAITestServer):
        def _record(self, entry: dict[str, Any]) -> None:  # a long run: keep no request bodies
            return None

    def answer(_: dict[str, Any]) -> str:
        time.sleep(latency)
        return "yes"

    with Forgetful(answer) as srv:
        print(srv.base_url, flush=True)
        sys.stdin.read()


# -- where the driver's CPU goes --------------------------------------------------------------


class StageClock:
    """CPU time of the driver by stage, from wrappers around the functions each stage runs.

    Each wrapper reads its thread's CPU clock (``time.thread_time``) and keeps the time of the
    wrapped stages it calls apart (a request build that encodes a frame counts the encoding as
    ``encode``), so stages add up without double counting. The wrappers sit on functions that the
    code before and after issue 29 both has, so the same script measures either.
    """

    STAGES = ("encode", "request build", "client", "scoring", "save")

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self._lock = threading.Lock()
        self._local = threading.local()

    def wrap(self, owner: Any, name: str, stage: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)
        clock = self

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            stack: list[float] = clock._local.__dict__.setdefault("stack", [])
            start = time.thread_time()
            stack.append(0.0)
            try:
                return original(*args, **kwargs)
            finally:
                nested = stack.pop()
                spent = time.thread_time() - start
                with clock._lock:
                    clock.cpu[stage] += spent - nested
                if stack:
                    stack[-1] += spent

        setattr(owner, name, timed)

    def wrap_async(self, owner: Any, name: str, stage: str) -> None:
        """Like :meth:`wrap` for a coroutine function that never waits (pure CPU behind ``async``)."""
        original: Callable[..., Any] = getattr(owner, name)
        clock = self

        @functools.wraps(original)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return await original(*args, **kwargs)
            finally:
                with clock._lock:
                    clock.cpu[stage] += time.thread_time() - start

        setattr(owner, name, timed)

    def install(self) -> None:
        import openai.resources.chat.completions.completions as chat_resource
        from openai._base_client import AsyncAPIClient
        from PIL import Image as PILImage

        from eviseek.eval import committer
        from eviseek.models.openai_compat import OpenAICompatModel

        self.wrap(PILImage.Image, "save", "encode")  # every PNG/JPEG encoding, wherever it happens
        self.wrap(OpenAICompatModel, "to_openai_messages", "request build")
        self.wrap(AsyncAPIClient, "_build_request", "client")  # the openai client's own request
        from eviseek.models import openai_compat

        for name in ("encode_chat_request", "decode_chat_reply"):  # plain http (issue 29)
            if hasattr(openai_compat, name):
                self.wrap(openai_compat, name, "client")
        self.wrap_async(chat_resource, "async_maybe_transform", "client")  # create()'s body walk
        self.wrap(committer, "score_trajectory", "scoring")
        self.wrap(Trajectory, "save", "save")


# -- one concurrency level -----------------------------------------------------------------------


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_by_pid(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds used so far by each of ``pids`` still alive (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            out[pid] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError, IndexError):
            continue
    return out


def _cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds used so far by ``pids`` (from /proc)."""
    return sum(_cpu_by_pid(pids).values())


def _machine_jiffies() -> tuple[int, int]:
    """Jiffies every CPU of the machine spent busy, and in all, so far (``/proc/stat``)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid``: env workers, or Ray's daemons and actors."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


class RssSampler:
    """Peak summed RSS of this process and its children, sampled every 50 ms."""

    def __init__(self) -> None:
        self.peak_kb = 0
        self.driver_peak_kb = 0
        # CPU seconds last seen per process: env workers exit when the run closes them, and
        # their time must still count (reading /proc only after the run would drop it).
        self.cpu_seen: dict[int, float] = {}
        self.own_cpu_s = 0.0
        self.machine: list[tuple[float, int, int, float, float]] = []
        """Every 50 ms (``--timeline``): the time, the whole machine's busy and all jiffies, and
        the CPU seconds of the driver and of the processes below it (env workers) so far."""
        """CPU this sampler took in the driver (left out of the driver's figures)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self, children: list[int] | None = None) -> tuple[int, int]:
        me = os.getpid()
        driver = _rss_kb(me)
        kids = _descendants(me) if children is None else children
        return driver, driver + sum(_rss_kb(c) for c in kids)

    def _run(self) -> None:
        started = time.thread_time()
        children: list[int] = []
        ticks = 0
        while not self._stop.wait(0.05):
            if ticks % 20 == 0:  # the process tree once a second: a walk of /proc is not free
                children = _descendants(os.getpid())
            ticks += 1
            driver, total = self.sample(children)
            self.driver_peak_kb = max(self.driver_peak_kb, driver)
            self.peak_kb = max(self.peak_kb, total)
            self.cpu_seen.update(_cpu_by_pid([os.getpid(), *children]))
            if TIMELINE_ON:
                driver_s = self.cpu_seen.get(os.getpid(), 0.0)
                below_s = sum(self.cpu_seen.values()) - driver_s
                self.machine.append((time.perf_counter(), *_machine_jiffies(), driver_s, below_s))
        self.own_cpu_s = time.thread_time() - started

    def cpu_since(self, before: dict[int, float]) -> float:
        """CPU seconds the driver and its children used since ``before`` (dead ones included)."""
        seen = {**self.cpu_seen, **_cpu_by_pid(list(self.cpu_seen))}
        return sum(cpu - before.get(pid, 0.0) for pid, cpu in seen.items())

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


if os.environ.get("BENCH_DRIVER_SWITCH"):
    sys.setswitchinterval(float(os.environ["BENCH_DRIVER_SWITCH"]))


async def _level(
    concurrency: int,
    episodes: int,
    calls: int,
    latency: float,
    url: str,
    workers: int,
    root: Path,
    backend: str = "local",
) -> dict[str, Any]:
    cfg = RunConfig(
        backend=backend,  # type: ignore[arg-type]
        agents=["look-and-ask"],
        agent_config={"calls": calls},
        model="openai/bench",
        model_args={"max_concurrency": concurrency, "max_pixels": None, "timeout_s": 60 + 10 * latency},
        base_url=url,
        dataset="generated",
        concurrency=concurrency,
        env_workers=workers,
        plugins=[__file__],
        timeout_s=600,
    )
    questions = [
        Question(
            id=f"e{i:05d}",
            text="Is it there?",
            env_id=ENV_ID,
            ground_truth="yes",
            contract=AnswerContract(kind="yes_no", options=["yes", "no"]),
        )
        for i in range(episodes)
    ]
    run_kwargs: dict[str, Any] = {}
    if backend == "ray":
        # Actors (and their model clients and environments) start before the measurement.
        import ray

        from eviseek.eval.ray_backend import RayExecutor

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200_000_000)
        executor = RayExecutor(cfg)
        await executor.start()
        run_kwargs["executor"] = executor
    else:
        envs = make_env_provider(cfg)
        await envs.start()
        from eviseek.models.registry import get_model

        model = get_model("openai/bench", base_url=url, api_key="none", **cfg.model_args)
        # Warm up: import the openai client, open connections (not part of the measurement).
        await asyncio.gather(*(model.generate([ChatMessage.user("hi")]) for _ in range(min(8, concurrency))))
        run_kwargs.update(model=model, envs=envs)
    clock = StageClock()
    if backend == "local":
        clock.install()
    sampler = RssSampler()
    before_driver, before_total = sampler.sample()
    cpu_before = _cpu_by_pid([os.getpid(), *_descendants(os.getpid())])
    driver_before = _cpu_s([os.getpid()])
    profiler = None
    if PROFILE:
        import cProfile

        profiler = cProfile.Profile(time.thread_time)  # CPU, not the wait for a core
    with sampler:
        start = time.perf_counter()
        loop_cpu = time.thread_time()  # the event-loop thread's own CPU (evaluate runs on it)
        if profiler is not None:
            profiler.enable()  # the measured run only: start-up and imports stay out
        out = await evaluate(
            cfg, root / f"run-{concurrency}", questions=questions, progress=False, **run_kwargs
        )
        wall = time.perf_counter() - start
        loop_cpu = time.thread_time() - loop_cpu
        if profiler is not None:
            import pstats

            profiler.disable()
            if os.environ.get("BENCH_PROFILE_FILE"):  # the whole profile, for pstats
                profiler.dump_stats(f"{os.environ['BENCH_PROFILE_FILE']}.{concurrency}.prof")
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(30)
    cpu = sampler.cpu_since(cpu_before) - sampler.own_cpu_s
    driver_cpu = _cpu_s([os.getpid()]) - driver_before - sampler.own_cpu_s
    stages = {k: 1000 * clock.cpu.get(k, 0.0) / episodes for k in StageClock.STAGES}
    if backend == "local":
        stages["rest of driver"] = 1000 * driver_cpu / episodes - sum(stages.values())
        stages["env workers"] = 1000 * (cpu - driver_cpu) / episodes
    assert out.ran == episodes and out.failed == 0, (out.ran, out.failed)
    timeline = _timeline_summary(start, start + wall, concurrency, sampler.machine) if TIMELINE_ON else {}
    if os.environ.get("BENCH_TIMELINE_FILE"):  # the raw marks, for a closer look
        Path(f"{os.environ['BENCH_TIMELINE_FILE']}.{concurrency}.json").write_text(
            json.dumps({"start": start, "marks": TIMELINE})
        )
    ideal = concurrency / (calls * latency)
    rate = episodes / wall
    return {
        "concurrency": concurrency,
        "episodes": episodes,
        "wall_s": wall,
        "rate": rate,
        "ideal": ideal,
        "share": rate / ideal,
        "rss_before_mb": before_total / 1024,
        "rss_peak_mb": sampler.peak_kb / 1024,
        "driver_peak_mb": sampler.driver_peak_kb / 1024,
        "mb_per_inflight": max(0, sampler.peak_kb - before_total) / 1024 / concurrency,
        "driver_before_mb": before_driver / 1024,
        "cpu_ms_per_episode": 1000 * cpu / episodes,
        "cpu_share": cpu / wall,
        "driver_cpu_share": driver_cpu / wall,
        "loop_cpu_ms_per_episode": 1000 * loop_cpu / episodes,
        "stages_ms_per_episode": stages if backend == "local" else {},
        "load_before": os.getloadavg()[0],
        "timeline": timeline,
    }


def _timeline_summary(
    start: float, end: float, concurrency: int, machine: list[tuple[float, int, int, float, float]]
) -> dict[str, Any]:
    """Where the episodes' time went (``--timeline``): seconds per kind of wait (median, 90th
    percentile, max), when the first and last episodes started and ended, and the run's tail
    (from the last episode's end to ``evaluate`` returning: saves, commits, shutdown).

    Also how busy the whole machine's CPUs were (a share of all of them, from ``/proc/stat``
    every 50 ms) during the first wave's start (from the first episode's start until 90% of
    the first ``concurrency`` episodes had their first frame, the moment each can send its
    first model request), and over the whole run."""
    waits: dict[str, list[float]] = defaultdict(list)
    starts, ends, first_frames = [], [], []
    for marks in TIMELINE.values():
        prev = None
        for kind, at in marks:
            if prev is not None:
                waits[kind].append(at - prev)
            prev = at
        starts.append(marks[0][1] - start)
        ends.append(marks[-1][1] - start)
        first_frames.append((marks[0][1], next((at for kind, at in marks if kind == "step"), marks[-1][1])))
    out: dict[str, Any] = {
        kind: [round(float(np.percentile(v, q)), 3) for q in (50, 90, 100)] for kind, v in waits.items()
    }
    out["first start"] = round(min(starts), 3)
    out["last end"] = round(max(ends), 3)
    out["tail"] = round(end - start - max(ends), 3)
    first_wave = sorted(first_frames)[:concurrency]
    burst_end = float(np.percentile([frame for _, frame in first_wave], 90))
    out["first wave's start"] = round(burst_end - first_wave[0][0], 3)
    out["CPUs busy then"] = _busy(machine, first_wave[0][0], burst_end)
    out["CPUs busy over the run"] = _busy(machine, start, end)
    return out


def _busy(machine: list[tuple[float, int, int, float, float]], t0: float, t1: float) -> dict[str, float]:
    """Between the samples nearest ``t0`` and ``t1``: the share of all the machine's CPUs that
    was busy, and how many CPUs the driver and the env workers kept busy on average."""
    if len(machine) < 2:
        return {}
    i = min(range(len(machine)), key=lambda k: abs(machine[k][0] - t0))
    j = min(range(len(machine)), key=lambda k: abs(machine[k][0] - t1))
    i = min(i, len(machine) - 2)
    a, b = machine[i], machine[max(j, i + 1)]  # at least one 50 ms interval
    if b[2] <= a[2] or b[0] <= a[0]:
        return {}
    return {
        "machine": round((b[1] - a[1]) / (b[2] - a[2]), 2),
        "driver": round((b[3] - a[3]) / (b[0] - a[0]), 2),
        "env workers": round((b[4] - a[4]) / (b[0] - a[0]), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="32,128,256")
    parser.add_argument("--latency", type=float, default=1.0, help="model reply latency in seconds")
    parser.add_argument("--calls", type=int, default=3, help="model calls (and steps) per episode")
    parser.add_argument("--waves", type=int, default=3, help="episodes per slot (episodes = waves x C)")
    parser.add_argument("--env-workers", type=int, default=2)
    parser.add_argument(
        "--backend", default="local", choices=["local", "ray"], help="ray: a local 2-CPU Ray instance"
    )
    parser.add_argument("--size", default="320x240", help="frame size WIDTHxHEIGHT")
    parser.add_argument("--serve", type=float, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--url", default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--timeline",
        action="store_true",
        help="also print where episodes waited: reset, step, model call (median, p90, max s), "
        "the run's tail, and how busy the CPUs were (machine, driver, env workers) while the "
        "first wave started and over the run",
    )
    parser.add_argument("--json", default=None, help="also write every level's figures to this file")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="print the driver's 30 costliest functions per level (cProfile of the event-loop thread "
        "over the measured run; slows it)",
    )
    args = parser.parse_args()
    if args.backend == "ray" and args.serve is None and args.one is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests import netns

        if not netns.in_loopback_namespace():
            why = netns.namespace_problem()
            if why is not None:
                raise SystemExit(f"--backend ray runs only in a loopback-only network namespace: {why}")
            argv = netns.command([sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]])
            os.execv(argv[0], argv)
    if args.serve is not None:
        serve(args.serve)
        return
    if args.one is not None:
        root = Path(tempfile.mkdtemp(prefix="eviseek-inflight-"))
        level = _level(
            args.one, args.waves * args.one, args.calls, args.latency, args.url, args.env_workers, root,
            args.backend,
        )  # fmt: skip
        try:
            result = asyncio.run(level)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        print(json.dumps(result), flush=True)
        return

    width, height = (int(v) for v in args.size.lower().split("x"))
    env = {**os.environ, "BENCH_FRAME_W": str(width), "BENCH_FRAME_H": str(height)}
    if args.timeline:
        env["BENCH_TIMELINE"] = "1"
    if args.profile:
        env["BENCH_PROFILE"] = "1"
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(args.latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    rows = []
    try:
        for level in [int(v) for v in args.levels.split(",")]:
            server_cpu = _cpu_s([server.pid])
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--one",
                    str(level),
                    "--url",
                    url,
                    "--latency",
                    str(args.latency),
                    "--calls",
                    str(args.calls),
                    "--waves",
                    str(args.waves),
                    "--env-workers",
                    str(args.env_workers),
                    "--backend",
                    args.backend,
                ],
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            if out.returncode != 0:
                raise SystemExit(f"concurrency {level} failed:\n{out.stderr[-3000:]}")
            if args.profile:
                print(f"-- concurrency {level}: driver profile\n{out.stderr[-8000:]}", file=sys.stderr)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            rows[-1]["server_cpu_ms_per_episode"] = (
                1000 * (_cpu_s([server.pid]) - server_cpu) / rows[-1]["episodes"]
            )
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait(timeout=30)
    print(
        f"{args.calls} model calls per episode (a new {width}x{height} frame each, PNG to the server), "
        f"model latency {args.latency}s, "
        + (
            "Ray backend (local 2-CPU instance: 2 actors, environments in their threads), "
            if args.backend == "ray"
            else f"{args.env_workers} env worker processes, "
        )
        + f"{args.waves} episodes per slot"
    )
    print(
        f"{'in flight':>9} {'episodes':>8} {'wall s':>7} {'ep/s':>7} {'ideal':>7} {'share':>6} "
        f"{'RSS before':>10} {'RSS peak':>9} {'MB/episode':>10} {'CPU ms/ep':>9} {'CPUs busy':>9}"
    )
    for r in rows:
        print(
            f"{r['concurrency']:>9} {r['episodes']:>8} {r['wall_s']:>7.1f} {r['rate']:>7.1f} "
            f"{r['ideal']:>7.1f} "
            f"{100 * r['share']:>5.1f}% {r['rss_before_mb']:>8.0f}MB {r['rss_peak_mb']:>7.0f}MB "
            f"{r['mb_per_inflight']:>10.2f} {r['cpu_ms_per_episode']:>9.0f} {r['cpu_share']:>9.2f}"
        )
    if any(r["stages_ms_per_episode"] for r in rows):
        names = list(rows[0]["stages_ms_per_episode"])
        print("\nCPU ms per episode by stage (driver; env workers apart; the model server, a test stand-in):")
        print(
            f"{'in flight':>9} "
            + " ".join(f"{n:>14}" for n in names)
            + f" {'model server':>12} {'loop thread':>11} {'driver CPUs':>11} {'CPUs needed at ideal':>20}"
        )
        for r in rows:
            cells = " ".join(f"{r['stages_ms_per_episode'][n]:>14.1f}" for n in names)
            # What the ideal rate would take: every process's CPU per episode times that rate.
            total = r["cpu_ms_per_episode"] + r["server_cpu_ms_per_episode"]
            print(
                f"{r['concurrency']:>9} {cells} {r['server_cpu_ms_per_episode']:>12.1f} "
                f"{r['loop_cpu_ms_per_episode']:>11.1f} {r['driver_cpu_share']:>11.2f} "
                f"{total * r['ideal'] / 1000:>20.2f}"
            )
    for r in rows:
        if r.get("timeline"):
            print(f"in flight {r['concurrency']}: waits (median, p90, max s), run edges (s): ", end="")
            print(json.dumps(r["timeline"]))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    print(
        "goals: >= 90% of ideal at 128 in flight, >= 80% at 256; < 50 MB per in-flight episode "
        "(RSS: driver + env workers)"
    )
    print(
        "CPU ms/ep: driver + env workers per episode (frames, PNG encoding for the request and the saved "
        f"trajectory, HTTP, scoring, saving); this machine has {os.cpu_count()} CPUs, load now "
        f"{os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()

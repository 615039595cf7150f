"""A hostile sweep of the ``eviseek`` command line: bad inputs to every command, each of which must
end in one ``error:`` line (or Click's one usage line), never a traceback or a hang, with the exit
code the CLI reference's table gives it (2: a bad flag, file content or plugin; 1: a missing
resource or a run-directory problem; 3: failed episodes).

Each case runs as a real process: one Python process imports the CLI once and forks a child per
case, which runs ``python -m eviseek ARGS`` in a folder of its own (what a user's process does,
without paying the imports a hundred times). The fixtures (a finished one-episode run, damaged
copies of it, bad question files, failing plugins) are made first in a scratch folder; after the
sweep the finished run's records must be byte-identical (no case may change existing results).

    python scripts/cli_sweep.py                 # every case; exit 1 if any fails
    python scripts/cli_sweep.py --only report   # cases whose name contains 'report'
    python scripts/cli_sweep.py --list          # the case names

The tests (tests/scripts/test_cli_sweep.py) run a part of the cases through :func:`sweep`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import runpy
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

USAGE, MISSING = 2, 1
"""The two exit codes the cases expect (eviseek.cli.errors.EXIT_USAGE and EXIT_ERROR; numbers here
so that the script states its expectations without importing what it checks)."""


@dataclass(frozen=True)
class Case:
    """One command line and what it must end in. ``{name}`` in an argument is a fixture path (see
    :func:`prepare`); ``words`` must appear in the error line."""

    name: str
    args: tuple[str, ...]
    code: int
    words: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    needs_run: bool = False
    """Whether the case reads the finished run (the test runs those sparingly: the run costs
    seconds to make)."""


class Outcome(BaseModel):
    """What one case did, and whether that is what it had to do."""

    name: str
    code: int | None
    expected: int
    seconds: float
    problem: str | None = None
    """``None`` when the case passed; otherwise what was wrong (traceback, hang, code, lines)."""
    error_line: str = ""


def _c(name: str, command: str, code: int = USAGE, words: Sequence[str] = (), **env: str) -> Case:
    """A case from its command line as a shell would split it; ``{EVAL}`` stands for an eval of
    the reference policy without progress bar or worker processes, ``{DOWN}`` for a model server
    that is not there."""
    command = command.replace("{EVAL}", " ".join(_EVAL)).replace("{DOWN}", "--base-url " + _DOWN)
    args = tuple(shlex.split(command))
    needs = any(f"{{{k}" in a for a in args for k in ("run", "big", "broken", "qid"))
    return Case(name, args, code, tuple(words), dict(env), needs)


_EVAL = ("eval", "--model", "reference", "--no-progress", "--env-workers", "0")
_TT = ("--dataset", "tabletop:dev")
_DOWN = "http://127.0.0.1:9/v1"
"""Port 9 (discard) on loopback: nothing listens there, so a connection is refused at once."""

CASES: list[Case] = [
    # --- root
    _c("root/unknown-command", "nope"),
    _c("root/unknown-flag", "--nope"),
    # --- eval
    _c("eval/no-flags", "eval"),
    _c("eval/missing-model", "eval --agents passive --dataset tabletop:dev --out {tmp}/r"),
    _c(
        "eval/unknown-agent",
        "{EVAL} --agents nope --dataset tabletop:dev --out {tmp}/r",
        words=["unknown agent"],
    ),
    _c("eval/empty-agent", "{EVAL} --agents , --dataset tabletop:dev --out {tmp}/r"),
    _c("eval/bad-agent-switch", "{EVAL} --agents eviseek:nope --dataset tabletop:dev --out {tmp}/r"),
    _c("eval/unknown-model", "eval --agents passive --model nope/x --dataset tabletop:dev --out {tmp}/r"),
    _c("eval/unknown-dataset", "{EVAL} --agents passive --dataset nope:dev --out {tmp}/r"),
    _c("eval/unknown-split", "{EVAL} --agents passive --dataset tabletop:nope --out {tmp}/r"),
    _c("eval/limit-0", "{EVAL} --agents passive --dataset tabletop:dev --limit 0 --out {tmp}/r"),
    _c("eval/limit-text", "{EVAL} --agents passive --dataset tabletop:dev --limit x --out {tmp}/r"),
    _c("eval/budget-0", "{EVAL} --agents passive --dataset tabletop:dev --budget 0 --out {tmp}/r"),
    _c("eval/timeout-nan", "{EVAL} --agents passive --dataset tabletop:dev --timeout nan --out {tmp}/r"),
    _c("eval/timeout-neg", "{EVAL} --agents passive --dataset tabletop:dev --timeout -1 --out {tmp}/r"),
    _c("eval/concurrency-0", "{EVAL} --agents passive --dataset tabletop:dev -c 0 --out {tmp}/r"),
    _c("eval/backend", "{EVAL} --agents passive --dataset tabletop:dev --backend x --out {tmp}/r"),
    _c("eval/env-images", "{EVAL} --agents passive --dataset tabletop:dev --env-images gif --out {tmp}/r"),
    _c("eval/env-url", "{EVAL} --agents passive --dataset tabletop:dev --env-url ftp://x --out {tmp}/r"),
    _c("eval/model-arg-form", "{EVAL} --agents passive --dataset tabletop:dev --model-arg x --out {tmp}/r"),
    _c("eval/agent-arg-form", "{EVAL} --agents passive --dataset tabletop:dev --agent-arg =1 --out {tmp}/r"),
    _c(
        "eval/agent-arg-unknown",
        "{EVAL} --agents passive --dataset tabletop:dev --agent-arg zz=1 --out {tmp}/r",
    ),
    _c(
        "eval/ray-resource",
        "{EVAL} --agents passive --dataset tabletop:dev --ray-resource GPU=-1 --out {tmp}/r",
    ),
    _c("eval/out-is-file", "{EVAL} --agents passive --dataset tabletop:dev --out {file}"),
    _c(
        "eval/autotool-on-tabletop",
        "{EVAL} --agents autotool --dataset tabletop:dev --out {tmp}/r",
        words=["built for"],
    ),
    _c(
        "eval/key-variable-unset",
        "eval --agents passive --model openai/m --dataset tabletop:dev {DOWN} "
        "--api-key-env EVISEEK_SWEEP_UNSET "
        "--out {tmp}/r",
        code=MISSING,
    ),
    _c(
        "eval/server-down",
        "eval --agents passive --model openai/m --dataset tabletop:dev --limit 1 {DOWN} --no-progress "
        "--out {tmp}/r",
        code=MISSING,
        words=["unreachable"],
    ),
    _c("eval/resume-nothing", "eval --out {tmp}/r"),
    _c(
        "eval/questions-not-utf8",
        "{EVAL} --agents passive --dataset {latin1} --out {tmp}/r",
        words=["UTF-8"],
    ),
    _c(
        "eval/questions-not-json",
        "{EVAL} --agents passive --dataset {notjson} --out {tmp}/r",
        words=["not valid JSON"],
    ),
    _c("eval/questions-not-records", "{EVAL} --agents passive --dataset {notq} --out {tmp}/r"),
    _c("eval/questions-huge", "{EVAL} --agents passive --dataset {hugeq} --out {tmp}/r", words=["MiB"]),
    _c(
        "eval/questions-missing",
        "{EVAL} --agents passive --dataset {tmp}/none.jsonl --out {tmp}/r",
        code=MISSING,
    ),
    _c(
        "eval/questions-empty-dir",
        "{EVAL} --agents passive --dataset {emptydir} --out {tmp}/r",
        code=MISSING,
    ),
    _c(
        "eval/plugin-raise",
        "{EVAL} --agents passive --dataset tabletop:dev --plugin {plugin_raise} --out {tmp}/r",
        words=["RuntimeError"],
    ),
    _c(
        "eval/plugin-syntax",
        "{EVAL} --agents passive --dataset tabletop:dev --plugin {plugin_syntax} --out {tmp}/r",
        words=["syntax error"],
    ),
    _c(
        "eval/plugin-package",
        "{EVAL} --agents passive --dataset tabletop:dev --plugin {plugin_package} --out {tmp}/r",
        words=["not installed"],
    ),
    _c(
        "eval/plugin-exit0",
        "{EVAL} --agents passive --dataset tabletop:dev --plugin {plugin_exit0} --out {tmp}/r",
        words=["sys.exit(0)"],
    ),
    _c(
        "eval/plugin-exit1",
        "{EVAL} --agents passive --dataset tabletop:dev --plugin {plugin_exit1} --out {tmp}/r",
        words=["sys.exit(1)"],
    ),
    _c(
        "eval/plugin-missing",
        "{EVAL} --agents passive --dataset tabletop:dev --plugin {plugin_missing} --out {tmp}/r",
        words=["does not exist"],
    ),
    _c(
        "eval/plugin-module-missing",
        "{EVAL} --agents passive --dataset tabletop:dev --plugin no_such_mod_x --out {tmp}/r",
        words=["no module"],
    ),
    # --- demo
    _c("demo/env", "demo --env nope --out {tmp}/d"),
    _c("demo/split", "demo --split nope --out {tmp}/d"),
    _c("demo/agents", "demo --agents nope --out {tmp}/d"),
    _c("demo/limit-0", "demo --limit 0 --out {tmp}/d"),
    _c("demo/budget-0", "demo --budget 0 --out {tmp}/d"),
    _c("demo/model", "demo --model nope/x --out {tmp}/d"),
    _c(
        "demo/server-down",
        "demo --model openai/x {DOWN} --limit 1 --no-progress --no-episodes --out {tmp}/d",
        code=MISSING,
        words=["unreachable"],
    ),
    _c(
        "demo/key-unset",
        "demo --model openai/x {DOWN} --api-key-env EVISEEK_SWEEP_UNSET --out {tmp}/d",
        code=MISSING,
    ),
    # --- score
    _c("score/missing", "score {tmp}/none", code=MISSING),
    _c("score/by", "score {run} --by nope"),
    _c("score/rules", "score {run} --rules nope"),
    _c("score/file", "score {file}", code=MISSING),
    _c("score/broken-trajectory", "score {broken} --rebuild", code=MISSING),
    # --- report
    _c("report/missing", "report {tmp}/none", code=MISSING),
    _c(
        "report/empty-pairs",
        "report {run} --compare passive:eviseek,, -o {tmp}/rep",
        words=["empty pair"],
    ),
    _c("report/compare-self", "report {run} --compare passive:passive -o {tmp}/rep"),
    _c("report/compare-unknown", "report {run} --compare a:b -o {tmp}/rep"),
    _c("report/compare-empty", "report {run} --compare '' -o {tmp}/rep"),
    _c("report/confidence-1", "report {run} --confidence 1 -o {tmp}/rep"),
    _c("report/confidence-nan", "report {run} --confidence nan -o {tmp}/rep"),
    _c("report/resamples-0", "report {run} --resamples 0 -o {tmp}/rep"),
    _c("report/out-is-file", "report {run} -o {file}"),
    _c(
        "report/huge-trajectory",
        "report {big} --no-episodes --resamples 10 -o {tmp}/rep",
        code=MISSING,
        words=["MiB"],
    ),
    _c(
        "report/broken-trajectory",
        "report {broken} --no-episodes --resamples 10 -o {tmp}/rep",
        code=MISSING,
        words=["not valid JSON"],
    ),
    _c("report/not-a-run", "report {emptydir}", code=MISSING),
    # --- judge
    _c("judge/protocol", "judge {run} --protocol nope --model reference/tabletop"),
    _c("judge/missing", "judge {tmp}/none --model reference/tabletop", code=MISSING),
    _c("judge/concurrency-0", "judge {run} --model reference/tabletop -c 0"),
    _c("judge/timeout-inf", "judge {run} --model openai/j --timeout inf"),
    _c("judge/model-arg", "judge {run} --model reference/tabletop --model-arg novalue"),
    # --- replay
    _c("replay/same-folder", "replay {run} --out {run} --model reference", words=["new folder"]),
    _c("replay/agent", "replay {run} --out {tmp}/o --model reference --agent x"),
    _c("replay/variants", "replay {run} --out {tmp}/o --model reference --variants zz"),
    _c("replay/missing", "replay {tmp}/none --out {tmp}/o --model reference", code=MISSING),
    _c("replay/concurrency-0", "replay {run} --out {tmp}/o -c 0"),
    # --- view
    _c("view/missing", "view {tmp}/none", code=MISSING),
    _c("view/thumb", "view {run} --thumb-size 5"),
    _c("view/out-for-run", "view {run} --out {tmp}/x.html"),
    _c("view/huge-trajectory", "view {big}", code=MISSING, words=["MiB"]),
    # --- tabletop
    _c("tabletop/generate-n-0", "tabletop generate -o {tmp}/g -n 0"),
    _c("tabletop/generate-seed-neg", "tabletop generate -o {tmp}/g --seed -1"),
    _c("tabletop/generate-subcategory", "tabletop generate -o {tmp}/g -s nope"),
    _c("tabletop/generate-width", "tabletop generate -o {tmp}/g --width 20000"),
    _c("tabletop/generate-out-file", "tabletop generate -o {file} -n 1"),
    _c("tabletop/render-txt", "tabletop render {run} --id {qid} -o {tmp}/x.txt"),
    _c(
        "tabletop/render-action",
        "tabletop render {run} --id {qid} -a jump -o {tmp}/x.png",
        words=["legal actions"],
    ),
    _c("tabletop/render-action-syntax", "tabletop render {run} --id {qid} -a 'move_up(' -o {tmp}/x.png"),
    _c("tabletop/render-id", "tabletop render {run} --id nope -o {tmp}/x.png"),
    _c("tabletop/render-width", "tabletop render {run} --id {qid} --width 20000"),
    _c("tabletop/render-not-utf8", "tabletop render {latin1} --id x -o {tmp}/x.png"),
    _c("tabletop/render-missing", "tabletop render {tmp}/none.jsonl --id x -o {tmp}/x.png", code=MISSING),
    _c("tabletop/stats-both", "tabletop stats --split dev --questions {run}"),
    _c("tabletop/stats-split", "tabletop stats --split nope"),
    _c("tabletop/stats-not-utf8", "tabletop stats --questions {latin1}", words=["UTF-8"]),
    # --- house
    _c("house/rooms-5", "house generate -o {tmp}/h --rooms 5"),
    _c("house/seed-neg", "house generate -o {tmp}/h --seed -1"),
    _c("house/kind", "house generate -o {tmp}/h --kind nope", words=["kinds"]),
    _c("house/split", "house generate -o {tmp}/h --split nope"),
    _c("house/n-0", "house generate -o {tmp}/h -n 0"),
    _c("house/render-txt", "house render {run} --id {qid} -o {tmp}/x.txt"),
    _c("house/render-id", "house render {run} --id nope -o {tmp}/x.png"),
    _c("house/render-width", "house render {run} --id {qid} --width 20000"),
    _c("house/render-not-utf8", "house render {latin1} --id x -o {tmp}/x.png"),
    # --- models
    _c("models/check-unknown", "models check --model nope/x"),
    _c("models/check-down", "models check --model openai/m {DOWN}", code=MISSING),
    _c(
        "models/check-key",
        "models check --model openai/m {DOWN} --api-key-env EVISEEK_SWEEP_UNSET",
        code=MISSING,
    ),
    _c("models/check-timeout", "models check --model openai/m --timeout 0"),
    _c("models/check-image-size", "models check --model openai/m --image-size 0"),
    _c("models/check-base-url", "models check --model openai/m --base-url 'not a url'"),
    # --- benchmarks
    _c("benchmarks/plugin-raise", "benchmarks list --plugin {plugin_raise}", words=["RuntimeError"]),
    _c("benchmarks/plugin-exit0", "benchmarks list --plugin {plugin_exit0}", words=["sys.exit(0)"]),
    _c("benchmarks/plugin-missing", "benchmarks list --plugin no_such_mod_x"),
    # --- env
    _c(
        "env/serve-unknown",
        "env serve --env nope/X-v0",
        words=["unknown environment"],
        EVISEEK_ENV_TOKEN="t0123456789",
    ),
    _c("env/serve-no-token", "env serve --env eviseek/ImageZoom-v0", EVISEEK_ENV_TOKEN=""),
    _c("env/serve-port", "env serve --env eviseek/ImageZoom-v0 --port 70000"),
    _c(
        "env/serve-env-arg",
        "env serve --env eviseek/ImageZoom-v0 --env-arg zz=1",
        EVISEEK_ENV_TOKEN="t0123456789",
    ),
    _c(
        "env/serve-plugin",
        "env serve --env x/Y-v0 --plugin {plugin_raise}",
        EVISEEK_ENV_TOKEN="t0123456789",
    ),
    _c("env/serve-mb", "env serve --env eviseek/ImageZoom-v0 --max-request-mb 0"),
    _c("env/check-url", "env check ftp://h --dataset tabletop:dev"),
    _c(
        "env/check-images",
        "env check http://127.0.0.1:9 --dataset tabletop:dev --env-images gif",
        EVISEEK_ENV_TOKEN="t0123456789",
    ),
    _c(
        "env/check-down",
        "env check http://127.0.0.1:9 --dataset tabletop:dev --timeout 5",
        code=MISSING,
        EVISEEK_ENV_TOKEN="t0123456789",
    ),
    # --- esibench
    _c("esibench/stats-missing", "esibench stats {tmp}/none", code=MISSING),
    _c("esibench/prompts-agent", "esibench prompts {tmp}/none --agent nope --id 1", code=MISSING),
    _c(
        "esibench/import-missing",
        "esibench import {tmp}/none --questions {tmp}/q --out {tmp}/o",
        code=MISSING,
    ),
    _c(
        "esibench/import-mb",
        "esibench import {emptydir} --questions {emptydir} --out {tmp}/o --max-answer-mb nan",
    ),
    # --- autotool
    _c(
        "autotool/dataset",
        "autotool eval --model scripted/echo --dataset nope --out {tmp}/a",
        code=MISSING,
        words=["neither an existing file"],
    ),
    _c(
        "autotool/dataset-name",
        "autotool eval --model scripted/echo --dataset nope:x --out {tmp}/a",
        words=["unknown dataset"],
    ),
    _c(
        "autotool/force-mode",
        "autotool eval --model scripted/echo --dataset synthetic:2 --force-mode x --out {tmp}/a",
    ),
    _c(
        "autotool/force-how",
        "autotool eval --model scripted/echo --dataset synthetic:2 --force-how x --out {tmp}/a",
    ),
    _c(
        "autotool/max-turns-0",
        "autotool eval --model scripted/echo --dataset synthetic:2 --max-turns 0 --out {tmp}/a",
    ),
    _c("autotool/synthetic-bad", "autotool eval --model scripted/echo --dataset synthetic:x --out {tmp}/a"),
    # --- train
    _c("train/config-missing", "train autotool -c {tmp}/none.yaml --check", code=MISSING),
    _c("train/config-not-yaml", "train autotool -c {notjson} --check"),
    _c("train/config-bad-yaml", "train autotool -c {badyaml} --check"),
    _c("train/config-not-utf8", "train autotool -c {latin1yaml} --check"),
    _c("train/set-unknown", "train autotool -c {goodyaml} --check --set nope.x=1"),
    _c("train/set-form", "train autotool -c {goodyaml} --check --set novalue"),
    _c("train/preset", "train autotool -c {goodyaml} --check --preset nope"),
    _c("train/max-steps-0", "train autotool -c {goodyaml} --check --max-steps 0"),
]


# ---------------------------------------------------------------------------------------------
# Fixtures.

_PLUGINS = {
    "raise": "raise RuntimeError('this plugin refuses to load')\n",
    "syntax": "def broken(:\n    pass\n",
    "package": "import eviseek_sweep_no_such_package  # noqa: F401\n",
    "exit0": "import sys\n\nsys.exit(0)\n",
    "exit1": "import sys\n\nsys.exit(1)\n",
}


def prepare(work: Path) -> dict[str, str]:
    """Make the fixtures under ``work``; return the placeholder names and their paths.

    ``{run}`` is a finished one-episode tabletop run of the reference policy (made with the real
    ``eval`` command, a few seconds); ``{big}`` a copy whose trajectory is a sparse 1 GiB file and
    whose store is gone (so it must be read); ``{broken}`` a copy whose trajectory is not JSON.
    """
    work.mkdir(parents=True, exist_ok=True)
    paths: dict[str, str] = {}

    def put(name: str, content: str | bytes, suffix: str = ".jsonl") -> None:
        path = work / f"{name}{suffix}"
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        paths[name] = str(path)

    put("latin1", b'{"id": "caf\xe9"}\n')
    put("notjson", "{not json\n")
    put("notq", '{"id": 1}\n')
    put("badyaml", "a: [1,\n", ".yaml")
    put("latin1yaml", b"output_dir: caf\xe9\n", ".yaml")
    put("goodyaml", "{}\n", ".yaml")
    put("file", "a file, not a folder\n", ".txt")
    huge = work / "huge.jsonl"
    with open(huge, "wb") as fh:
        fh.truncate(600 << 20)  # sparse: no disk used, but larger than any reader accepts
    paths["hugeq"] = str(huge)
    (work / "emptydir").mkdir(exist_ok=True)
    paths["emptydir"] = str(work / "emptydir")
    for kind, text in _PLUGINS.items():
        put(f"plugin_{kind}", text, ".py")
    paths["plugin_missing"] = str(work / "no_such_plugin.py")
    return paths


def prepare_run(work: Path, paths: dict[str, str]) -> None:
    """Add ``{run}``, ``{qid}``, ``{big}`` and ``{broken}`` to ``paths`` (see :func:`prepare`)."""
    run = work / "run"
    if not (run / "results.sqlite").exists():
        subprocess.run(
            [sys.executable, "-m", "eviseek", *_EVAL, "--agents", "passive", *_TT, "--limit", "1", "--out",
             str(run)],
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip
    paths["run"] = str(run)
    paths["qid"] = json.loads((run / "questions.jsonl").read_text().splitlines()[0])["id"]
    for name in ("big", "broken"):
        copy = work / name
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(run, copy)
        (copy / "results.sqlite").unlink()
        trajectory = next(copy.glob("episodes/*/*/trajectory.json"))
        if name == "big":
            with open(trajectory, "r+b") as fh:
                fh.truncate(1 << 30)
        else:
            trajectory.write_text("{broken")
        paths[name] = str(copy)


def run_digest(run: Path) -> str:
    """A digest of a run's records (configuration, questions, store, trajectories)."""
    h = hashlib.sha256()
    files = [run / "run.json", run / "questions.jsonl", run / "results.sqlite"]
    files += sorted(run.glob("episodes/*/*/trajectory.json"))
    for f in files:
        h.update(str(f.relative_to(run)).encode())
        h.update(f.read_bytes() if f.exists() else b"<absent>")
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# Running.


def _child(args: list[str], cwd: Path, env: dict[str, str]) -> None:
    """In the forked child: become ``python -m eviseek ARGS`` and end as it would."""
    code = 1
    try:
        os.chdir(cwd)
        os.environ.update(env)
        for k in [k for k, v in env.items() if v == ""]:
            del os.environ[k]
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, name in ((1, "stdout"), (2, "stderr")):
            out = os.open(cwd / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out, fd)
        # Fresh streams on those descriptors: the parent's may be replaced (pytest captures them).
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.argv = ["eviseek", *args]
        try:
            runpy.run_module("eviseek", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def run_case(case: Case, paths: dict[str, str], scratch: Path, timeout_s: float = 120.0) -> Outcome:
    """Run one case in a forked child and judge what it did."""
    cwd = Path(tempfile.mkdtemp(prefix=case.name.replace("/", "-") + "-", dir=scratch))
    fill = {**paths, "tmp": str(cwd)}
    args = [a.format(**fill) for a in case.args]
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        _child(args, cwd, case.env)
    code: int | None = None
    while time.perf_counter() - started < timeout_s:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            break
        time.sleep(0.02)
    seconds = time.perf_counter() - started
    outcome = Outcome(name=case.name, code=code, expected=case.code, seconds=round(seconds, 2))
    if code is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        outcome.problem = f"hang: no exit within {timeout_s:g}s"
        return outcome
    stderr = (cwd / "stderr").read_text(errors="replace")
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if _is_error_line(line)]
    outcome.error_line = errors[-1] if errors else (lines[-1] if lines else "")
    if "Traceback (most recent call last)" in stderr:
        outcome.problem = "traceback: " + (lines[-1] if lines else "")
    elif code != case.code:
        outcome.problem = f"exit code {code}, expected {case.code}"
    elif len(errors) != 1 or lines[-1] != errors[0]:
        outcome.problem = f"{len(errors)} error line(s) in {len(lines)} stderr line(s), expected one, last"
    else:
        missing = [w for w in case.words if w not in errors[0]]
        if missing:
            outcome.problem = f"error line lacks {missing}"
    return outcome


def _is_error_line(line: str) -> bool:
    # The boundary's line, or Click's usage line as eviseek.cli.main prints it ("PROG CMD: what
    # (see 'PROG CMD --help')"; PROG is "python -m eviseek" here).
    return line.startswith("error: ") or (": " in line and line.endswith(" --help')") and "(see '" in line)


def sweep(cases: Sequence[Case], work: Path) -> tuple[list[Outcome], bool]:
    """Run ``cases`` with fixtures under ``work``; returns the outcomes and whether the finished
    run's records stayed byte-identical."""
    import eviseek.cli.main  # noqa: F401  (imported once, before the forks: the point)

    paths = prepare(work)
    if any(c.needs_run for c in cases):
        prepare_run(work, paths)
    before = run_digest(Path(paths["run"])) if "run" in paths else ""
    scratch = work / "cases"
    scratch.mkdir(exist_ok=True)
    outcomes = [run_case(c, paths, scratch) for c in cases]
    unchanged = not before or run_digest(Path(paths["run"])) == before
    return outcomes, unchanged


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="Run the cases whose name contains this text")
    parser.add_argument("--list", action="store_true", help="Print the case names and exit")
    parser.add_argument("--json", action="store_true", help="Print the outcomes as JSON lines")
    parser.add_argument("--work", type=Path, default=None, help="Fixture folder (default: a temporary one)")
    opts = parser.parse_args(argv)
    cases = [c for c in CASES if opts.only in c.name]
    if opts.list:
        print("\n".join(f"{c.name}  (exit {c.code})" for c in cases))
        return 0
    work = opts.work or Path(tempfile.mkdtemp(prefix="eviseek-cli-sweep-"))
    outcomes, unchanged = sweep(cases, work)
    for o in outcomes:
        if opts.json:
            print(o.model_dump_json())
        else:
            mark = "ok  " if o.problem is None else "FAIL"
            print(f"{mark} {o.name:<36} exit {o.code} ({o.seconds:.1f}s)  {o.problem or o.error_line[:90]}")
    bad = [o for o in outcomes if o.problem]
    kinds = {
        k: sum(1 for o in bad if (o.problem or "").startswith(k)) for k in ("traceback", "hang", "exit code")
    }
    print(
        f"{len(outcomes)} case(s): {len(outcomes) - len(bad)} ok, {kinds['traceback']} traceback(s), "
        f"{kinds['hang']} hang(s), {kinds['exit code']} wrong exit code(s), "
        f"{len(bad) - sum(kinds.values())} other; finished run's records "
        + ("unchanged" if unchanged else "CHANGED"),
        file=sys.stderr,
    )
    if opts.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if not bad and unchanged else 1


if __name__ == "__main__":
    sys.exit(main())

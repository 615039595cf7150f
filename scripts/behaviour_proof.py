"""Record a fixed set of reference-model runs, or compare two recordings, to show that a
refactor left behaviour unchanged.

    PYTHONPATH=src .venv/bin/python scripts/behaviour_proof.py record OUT_DIR
    PYTHONPATH=src .venv/bin/python scripts/behaviour_proof.py compare BEFORE_DIR AFTER_DIR [--ignore K1,K2]

``record`` runs, each small enough for a loaded two-core machine (about two minutes in all):

- the tabletop (``tabletop:dev``, 3 questions) with four agents: passive, single-model, eviseek,
  frontier, played by the non-neural reference model; then the appendix-B judge over that run;
- the house (``house:dev``, 2 questions) with blind and eviseek-nav, then the EXPRESS judge;
- an ESI-Bench import of two official answer files (the test fixture's questions);
- the AutoTool eval (``eval --agents autotool`` and the ``autotool eval`` alias) on three
  synthetic zoom questions against a local OpenAI-compatible test server on 127.0.0.1;
- the Gymnasium wrappers (Tabletop-v0, House-v0, ImageZoom-v0): reset with a seed, a fixed action list,
  the observations' SHA-256 and the rewards.

``compare`` reads every JSON/JSONL file of both recordings, drops what is a clock or a random id
(see :data:`VOLATILE`), and reports every file whose remaining content differs, every file only
one side has, and every differing image (images are compared by content). Exit 1 on any
difference. ``--ignore`` drops more keys, the records a change adds on purpose (e.g.
``benchmark,plugin_sha256,replaced``, which issue 36 added to ``run.json`` and each question), so
that what is left shows nothing else changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from eviseek.types.rundir import STORE_FILE

ROOT = Path(__file__).resolve().parents[1]
STORE_DUMP = f"{STORE_FILE}.json"
"""The store's rows as JSON, written beside each recorded store."""

VOLATILE = {
    "id",
    "call_id",
    "episode_id",
    "base_url",
    "latency_s",
    "started_at",
    "finished_at",
    "created_at",
    "graded_at",
    "wall_s",
    "elapsed_s",
    "duration_s",
    "seconds",
    "time_s",
    "timestamp",
    "pid",
    "host",
    "hostname",
    "eviseek_version",
    "questions_sha256",  # a digest of questions.jsonl, which is compared itself (paths aside)
    "git",
    "command",
    "out",
    "run_dir",
    "env_step_s",
    "model_s",
    "step_s",
    "render_s",
    "total_s",
}
"""Keys whose values are clocks, random ids or the machine (anything ending ``_s`` too)."""


def _cli(*args: str, cwd: Path | None = None) -> None:
    cmd = [sys.executable, "-m", "eviseek", *args]
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if res.returncode not in (0, 3):
        raise SystemExit(
            f"{' '.join(args)} exited {res.returncode}:\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
        )


def _tabletop_and_judge(out: Path) -> None:
    run = out / "tabletop"
    _cli(
        "eval", "--out", str(run), "--dataset", "tabletop:dev", "--limit", "3",
        "--agents", "passive,single-model,eviseek,frontier", "--model", "reference", "--no-progress",
    )  # fmt: skip
    _cli("judge", str(run), "--model", "reference")


def _house_and_judge(out: Path) -> None:
    run = out / "house"
    _cli(
        "eval", "--out", str(run), "--dataset", "house:dev", "--limit", "2",
        "--agents", "blind,eviseek-nav", "--model", "reference", "--no-progress",
    )  # fmt: skip
    _cli("judge", str(run), "--protocol", "express", "--model", "reference")


def _esi_import(out: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.eval.esibench.conftest import FIXTURES
    from tests.eval.esibench.test_import import answer_file

    from eviseek.eval.datasets import load_dataset

    qs = {q.subcategory: q for q in load_dataset(f"esibench:{FIXTURES}?images=skip")}
    results, steps = out / "esi_src" / "results", out / "esi_src" / "steps"
    answer_file(results, steps, qs["Counting w Occlusion"], "4", task_name="counting", correct=False)
    answer_file(results, steps, qs["Material Transparency"], "yes", task_name="transparent", correct=True)
    _cli("esibench", "import", str(results), "--questions", str(FIXTURES), "--out", str(out / "esi"))


def _autotool(out: Path) -> None:
    from eviseek.testing.openai_server import OpenAITestServer

    def reply(request: dict[str, Any]) -> str:
        if not any(isinstance(m["content"], list) for m in request["messages"]):
            return "OK"
        if not [m for m in request["messages"] if m["role"] == "assistant"]:
            return (
                '<tool_on><think>small</think><tool_call>{"name": "image_zoom_in_tool", '
                '"arguments": {"bbox_2d": [10, 10, 200, 150]}}</tool_call>'
            )
        return "<think>seen</think><answer>A</answer>"

    common = [
        "--model",
        "openai/test-vlm",
        "--dataset",
        "synthetic:3:640",
        "--concurrency",
        "1",
        "--no-progress",
    ]
    with OpenAITestServer(reply) as server:
        _cli(
            "autotool", "eval", "--base-url", server.base_url, "--out", str(out / "autotool_alias"), *common,
            "--max-pixels", "100000", "--image-format", "jpeg", "--timeout", "30",
        )  # fmt: skip
        _cli(
            "eval",
            "--agents",
            "autotool",
            "--base-url",
            server.base_url,
            "--out",
            str(out / "autotool_eval"),
            *common,
        )


def _gymnasium(out: Path) -> None:
    import gymnasium as gym
    import numpy as np

    import eviseek

    sys.path.insert(0, str(ROOT))
    from tests.envs.test_gymnasium_ids import _image_question

    gym.register_envs(eviseek)

    def digest(obs: Any) -> str:
        if isinstance(obs, dict):
            return hashlib.sha256(
                b"".join(np.ascontiguousarray(obs[k]).tobytes() for k in sorted(obs))
            ).hexdigest()
        return hashlib.sha256(np.ascontiguousarray(obs).tobytes()).hexdigest()

    def play(env: Any, seed: int, actions: list[Any]) -> list[str]:
        obs, _ = env.reset(seed=seed)
        steps = [digest(obs)]
        for action in actions:
            obs, reward, term, trunc, _ = env.step(action)
            steps.append(f"{digest(obs)} {reward} {term} {trunc}")
            if term or trunc:
                break
        env.close()
        return steps

    record = {
        "tabletop": play(gym.make("eviseek/Tabletop-v0", width=64, height=48), 3, [0, 1, 2, 3, 1, 0]),
        "house": play(gym.make("eviseek/House-v0", width=64, height=48), 2, [0, 1, 2, 0, 3]),
        "image_zoom": play(
            gym.make("eviseek/ImageZoom-v0", questions=[_image_question()], width=64, height=48),
            0,
            [{"kind": 0, "box": np.array([0.85, 0.8, 1.0, 0.95])}, {"kind": 1, "box": np.zeros(4)}],
        ),
    }
    (out / "gymnasium.json").write_text(json.dumps(record, indent=1))


def record(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("EVISEEK_CACHE_DIR", str(out / "cache"))
    parts = {
        "tabletop": _tabletop_and_judge,
        "house": _house_and_judge,
        "esi": _esi_import,
        "autotool_eval": _autotool,
        "gymnasium.json": _gymnasium,
    }
    for name, part in parts.items():
        if (out / name).exists():
            continue  # recorded by an earlier, interrupted call
        print(f"[record] {name}", flush=True)
        part(out)
    for store in out.rglob(STORE_FILE):
        _dump_store(store)


def _dump_store(store: Path) -> None:
    """The store's rows as JSON beside it, so compare sees them (SQLite files are not byte-stable)."""
    con = sqlite3.connect(store)
    con.row_factory = sqlite3.Row
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    dump = {t: [dict(r) for r in con.execute(f"SELECT * FROM {t}")] for t in tables}
    con.close()
    for rows in dump.values():
        for row in rows:
            for k, v in list(row.items()):
                if isinstance(v, str) and v[:1] in "[{":
                    with contextlib.suppress(json.JSONDecodeError):
                        row[k] = json.loads(v)
    dump = {
        t: sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str)) for t, rows in dump.items()
    }
    (store.parent / STORE_DUMP).write_text(json.dumps(dump, indent=1, default=str))


_IGNORED: set[str] = set()
"""Keys dropped on request (``compare --ignore``): records a change adds on purpose."""


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip(v)
            for k, v in value.items()
            if k not in VOLATILE
            and k not in _IGNORED
            and not (k.endswith("_s") and isinstance(v, (int, float)))
        }
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, str):
        # Checkouts and recordings live in different folders: compare what follows them.
        value = re.sub(r"(/[^\s\"']+)?/tests/fixtures/", "<repo>/tests/fixtures/", value)
        if "/tmp/" in value or str(Path.home()) in value:
            return "<path>"
    return value


def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.name == STORE_DUMP:  # rows in an order that does not depend on clocks
        tables = _strip(json.loads(text))
        return {t: sorted(rows, key=lambda r: json.dumps(r, sort_keys=True)) for t, rows in tables.items()}
    if path.suffix == ".jsonl":
        return [_strip(json.loads(line)) for line in text.splitlines() if line.strip()]
    return _strip(json.loads(text))


def _files(root: Path) -> dict[str, Path]:
    skip = {"cache", "esi_src"}
    return {
        str(p.relative_to(root)): p
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and not skip & set(p.relative_to(root).parts)
        and not p.name.endswith((".sqlite", "-wal", "-shm", ".lock"))
    }


def compare(before: Path, after: Path) -> int:
    a, b = _files(before), _files(after)
    problems = [f"only in {before}: {k}" for k in sorted(a.keys() - b.keys())]
    problems += [f"only in {after}: {k}" for k in sorted(b.keys() - a.keys())]
    same = 0
    for key in sorted(a.keys() & b.keys()):
        pa, pb = a[key], b[key]
        if pa.suffix in (".json", ".jsonl"):
            equal = _load(pa) == _load(pb)
        elif pa.suffix in (".md", ".html", ".txt", ".csv"):
            equal = True  # rendered views; they carry clocks and paths, the JSON they come from is compared
        else:
            equal = pa.read_bytes() == pb.read_bytes()
        if equal:
            same += 1
        else:
            problems.append(f"differs: {key}")
    for line in problems:
        print(line)
    print(f"{same} file(s) identical (clocks and ids aside), {len(problems)} difference(s)")
    return 1 if problems else 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "record":
        record(Path(argv[1]))
        return 0
    if len(argv) == 5 and argv[0] == "compare" and argv[3] == "--ignore":
        _IGNORED.update(k for k in argv[4].split(",") if k)
        argv = argv[:3]
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

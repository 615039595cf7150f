"""Answer-only replays of a run's recorded EviSeek episodes (the paper's memory ablations, 5.4).

``replay_run(RUN, OUT, model, variants)`` re-asks only the answering call of every recorded
episode of ``agent`` (default ``eviseek``), once per variant, and writes a run directory that
``eviseek report`` reads like any other:

    board                   the board as the online agent had it (the replay reference)
    no_board                Single-model's memory: the whole text history, the current view and
                            up to five earlier views
    no_selective_retention  frames sampled evenly over the trajectory at the board's capacity

Each variant is an agent named ``<agent>-replay-<variant>``. Every question of the run is in the
replay's denominator: a question with no recorded online episode (a failed or missing one) is
written as a failed, incorrect result for each variant, as the paper counts a missing answer
(app. A, app. G). Results go to ``OUT/results.sqlite``
and trajectories to ``OUT/episodes/...`` as the eval harness writes them, so an interrupted
replay resumes where it stopped and finished replays are never asked again. The report's
default comparison family pairs each variant with the board replay (Table 3's shape).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eviseek.agents.eviseek.config import Memory
from eviseek.errors import ConfigError, SettingError
from eviseek.eval.rundir import RunData, load_run
from eviseek.eval.scoring import score_trajectory
from eviseek.eval.store import ResultsStore
from eviseek.models.base import Model
from eviseek.types import EpisodeResult, Question, Trajectory
from eviseek.types.question_file import write_questions
from eviseek.types.rundir import RunDir

VARIANTS: dict[str, Memory] = {"board": "board", "no_board": "recent", "no_selective_retention": "uniform"}
"""Replay variant -> the answer memory it uses (see :func:`eviseek.agents.replay_answer`)."""
REPLAY_SUFFIX = "-replay-"


def replay_agent(agent: str, variant: str) -> str:
    """The agent name of ``variant`` replayed from ``agent``'s episodes."""
    return f"{agent}{REPLAY_SUFFIX}{variant}"


def parse_variants(text: str) -> list[str]:
    """``board,no_board`` -> the variants, checked; the board reference always comes first."""
    chosen = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in VARIANTS]
    if unknown or not chosen:
        raise SettingError(
            f"--variants: unknown {', '.join(unknown) or '(none given)'}; use any of {', '.join(VARIANTS)}"
        )
    ordered = list(dict.fromkeys(chosen))
    return sorted(ordered, key=lambda v: v != "board")


def _settings(source: Path, model: Model, agent: str, variants: Sequence[str]) -> dict[str, Any]:
    return {
        "agents": [replay_agent(agent, v) for v in variants],
        "model": model.name,
        "dataset": f"replay:{source}",
        "replay": {"source": str(source), "agent": agent, "variants": list(variants)},
    }


def _benchmark_record(run: RunData, out: Path) -> dict[str, Any]:
    """The source run's benchmark and plugins, as the replay's ``run.json`` records them."""
    from eviseek.eval.benchmark import benchmark_names
    from eviseek.eval.config import plugin_records, resolve_plugins

    names = benchmark_names(run.questions)
    whole = len(names) == 1 and all(q.benchmark is not None for q in run.questions)
    raw = run.config.get("plugins")
    recorded = [str(p) for p in raw] if isinstance(raw, list) else []
    plugins, hashes = plugin_records(resolve_plugins(recorded, run.path), out)
    return {"benchmark": names[0] if whole else None, "plugins": plugins, "plugin_sha256": hashes}


def _prepare(out: Path, settings: dict[str, Any], questions: list[Question]) -> None:
    run = RunDir(out)
    if run.exists():
        saved = run.read_config()
        differs = [k for k in ("model", "replay") if saved.get(k) != settings[k]]
        if differs:
            raise ConfigError(
                f"{out} holds a replay with other settings ({', '.join(differs)} differ); "
                "choose another --out folder or repeat the original settings"
            )
        return
    out.mkdir(parents=True, exist_ok=True)
    write_questions(out, questions)
    run.write_config(json.dumps(settings, indent=1))


async def replay_run(
    run_dir: str | Path,
    out_dir: str | Path,
    model: Model,
    variants: Sequence[str] = tuple(VARIANTS),
    *,
    agent: str = "eviseek",
    concurrency: int = 4,
    plugins: Sequence[str] = (),
) -> list[EpisodeResult]:
    """Replay every recorded ``agent`` episode of ``run_dir`` into ``out_dir`` (resumable).
    ``plugins`` are imported before the run's own (a run's plugin benchmark that moved); the
    replay records the run's benchmark and plugins, so it is scored and reported as the run.

    Returns the results written by this call (finished ones from an earlier call are skipped).
    """
    from eviseek.agents.eviseek.replay import replay_answer

    source, out = Path(run_dir), Path(out_dir)
    if source.resolve() == out.resolve():
        raise SettingError("--out must be a new folder, not the run being replayed")
    run = load_run(source, plugins=plugins)
    episodes = {qid: path for (a, qid), path in run.episode_dirs.items() if a == agent}
    if not episodes:
        raise SettingError(
            f"{source} has no recorded {agent!r} episodes to replay (agents there: {', '.join(run.agents)})"
        )
    questions = list(run.questions)
    _prepare(out, _settings(source, model, agent, variants) | _benchmark_record(run, out), questions)
    written: list[EpisodeResult] = []
    gate = asyncio.Semaphore(concurrency)
    with ResultsStore(out) as store:
        done = store.done_keys()
        todo = [(v, q) for v in variants for q in questions if (replay_agent(agent, v), q.id) not in done]

        async def one(variant: str, question: Question) -> None:
            name = replay_agent(agent, variant)
            if question.id not in episodes:
                missing = Trajectory(episode_id=f"{name}-{question.id}", question_id=question.id, agent=name)
                missing.model = model.name
                missing.result = missing.make_result(
                    question,
                    correct=False,
                    score=0.0,
                    error=f"no recorded online {agent} episode to replay (counted as incorrect)",
                )
                missing.save(RunDir(out).episode_dir(name, question.id))
                store.add(missing.result)
                written.append(missing.result)
                return
            async with gate:
                traj = await replay_answer(
                    episodes[question.id], question, model, VARIANTS[variant], agent_name=name
                )
            # Scored as the eval harness scores its episodes, so the store holds verdicts.
            traj.result = score_trajectory(traj, question)
            traj.save(RunDir(out).episode_dir(name, question.id))
            store.add(traj.result)
            written.append(traj.result)

        await asyncio.gather(*(one(v, q) for v, q in todo))
    return written


def recorded_model(run_dir: str | Path) -> tuple[str, dict[str, Any]]:
    """The model a run recorded (``provider/name``) and its connection settings, to replay with."""
    config = RunDir(Path(run_dir)).read_config()
    name = str(config.get("model") or "")
    if not name or name == "unknown" or "," in name:
        raise ConfigError(
            f"{run_dir} records no single model ({name or 'none'}); give the answering model with --model"
        )
    settings = {k: config[k] for k in ("base_url", "api_key_env") if config.get(k)}
    settings["model_args"] = dict(config.get("model_args") or {})
    return name, settings

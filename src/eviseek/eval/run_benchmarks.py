"""Reading a saved run's benchmark back: its plugins imported, its benchmark looked up by name.

``eviseek score``, ``report`` and ``replay`` read a run through :func:`open_benchmarks`. The
run's questions record their benchmark (``Question.benchmark``) and ``run.json`` records the
run's (``benchmark``) and the plugins that registered it (``plugins``, files relative to the
run directory, with ``plugin_sha256``). Each reader imports those plugins (and any ``--plugin``
given to it), then looks every recorded benchmark up by name: one that is not registered stops
the command with one line naming the plugin to pass, instead of the run being scored by other
rules. A plugin file that changed since the run is named in a note.

Runs saved before these records are read once through the benchmarks' ``owns`` (as every reader
did before), with a note saying so.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eviseek.eval.benchmark import (
    UnregisteredBenchmark,
    benchmark_named,
    benchmark_names,
    benchmarks,
    record_benchmarks,
)
from eviseek.types import Question

__all__ = ["open_benchmarks"]


def _recorded(config: dict[str, Any], run_dir: Path) -> tuple[list[str], list[str], dict[str, str]]:
    """The run's plugins as recorded, as importable paths, and the recorded hashes."""
    from eviseek.eval.config import resolve_plugins

    raw = config.get("plugins")
    recorded = [str(p) for p in raw] if isinstance(raw, list) else []
    hashes = config.get("plugin_sha256")
    return (
        recorded,
        resolve_plugins(recorded, run_dir),
        {str(k): str(v) for k, v in hashes.items()} if isinstance(hashes, dict) else {},
    )


def _changed_files(
    recorded: list[str], paths: list[str], hashes: dict[str, str], given: Sequence[str]
) -> list[str]:
    """Notes on plugin files whose bytes differ from the run's record (a file given by the reader
    stands in for the recorded one of the same name)."""
    from eviseek.eval.config import file_sha256

    stand_ins = {os.path.basename(p): os.path.abspath(p) for p in given if p.endswith(".py")}
    paths = [stand_ins.get(os.path.basename(p), p) for p in paths]
    notes = []
    for name, path in zip(recorded, paths, strict=True):
        want = hashes.get(name)
        if want is not None and os.path.isfile(path) and file_sha256(path) != want:
            notes.append(
                f"plugin {name} differs from the file the run was made with (sha256 {want[:12]}... then, "
                f"{file_sha256(path)[:12]}... in {path}); its registrations are the file's as it is now"
            )
    return notes


def _hint(run_dir: Path, recorded: list[str], hashes: dict[str, str], problems: list[str]) -> str:
    """What to pass so that a run's missing benchmark is registered."""
    if not recorded:
        return f"the run {run_dir} records no plugin: pass --plugin with the module or file that registers it"
    made = ", ".join(f"{p} (sha256 {hashes[p][:12]}...)" if p in hashes else p for p in recorded)
    why = f" ({'; '.join(problems)})" if problems else ""
    return (
        f"the run {run_dir} was made with plugin(s) {made}{why}; pass --plugin with that module or "
        "the file's path where it is now"
    )


def open_benchmarks(
    run_dir: str | Path,
    config: dict[str, Any],
    questions: Sequence[Question],
    *,
    plugins: Sequence[str] = (),
) -> list[str]:
    """Make the benchmarks of a saved run available, and fill in the benchmark of questions saved
    before the records; returns notes for the reader (a plugin not imported, a plugin file that
    changed, questions recognised by content).

    ``config`` is the run's ``run.json``; ``plugins`` are given by the reader (``--plugin``) and
    are imported first, so they stand in for a recorded plugin that moved. Raises
    :class:`UnregisteredBenchmark` (one line naming the plugin to pass) when a benchmark the run
    records is still not registered."""
    from eviseek.eval.envpool import import_plugins, import_run_plugins

    run = Path(run_dir)
    import_plugins([os.path.abspath(p) if p.endswith(".py") else p for p in plugins])
    recorded, paths, hashes = _recorded(config, run)
    # A plugin given by the reader stands in for the recorded one of the same file name.
    given = {os.path.basename(p) for p in plugins if p.endswith(".py")} | set(plugins)
    problems = import_run_plugins([p for p in paths if os.path.basename(p) not in given and p not in given])
    notes = [*problems, *_changed_files(recorded, paths, hashes, plugins)]
    names = benchmark_names(questions)
    saved = config.get("benchmark")
    if isinstance(saved, str) and saved not in names:
        names.insert(0, saved)
    for name in names:
        try:
            benchmark_named(name)
        except UnregisteredBenchmark:
            raise UnregisteredBenchmark(
                f"{run}: its questions belong to benchmark {name!r}, which is not registered here; "
                + _hint(run, recorded, hashes, problems)
            ) from None
    if any(q.benchmark is None for q in questions):
        _check_old_spec(run, config, recorded, hashes, problems)
        dataset = config.get("dataset")
        note = record_benchmarks(questions, dataset if isinstance(dataset, str) else None)
        if note:
            notes.append(f"{run.name}: {note} (a run saved before benchmark records)")
    return notes


def _check_old_spec(
    run: Path, config: dict[str, Any], recorded: list[str], hashes: dict[str, str], problems: list[str]
) -> None:
    """A run saved before the records, made with plugins, whose dataset spec names a benchmark
    that is not registered: its questions must not be recognised as another benchmark's."""
    dataset = config.get("dataset")
    if not recorded or not isinstance(dataset, str) or os.path.exists(dataset):
        return
    name, sep, _ = dataset.partition(":")
    if sep and name and "/" not in name and name not in benchmarks() and name.lower() not in benchmarks():
        raise UnregisteredBenchmark(
            f"{run}: its dataset {dataset!r} names benchmark {name!r}, which is not registered here; "
            + _hint(run, recorded, hashes, problems)
        )

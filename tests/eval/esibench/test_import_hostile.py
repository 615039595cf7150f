"""``eviseek esibench import`` against hostile and broken answer files.

Outside testing found eight kinds of answer file that aborted the whole import with a traceback
(and left a half-written run that blocked the rerun), a FIFO that hung it, a large file that took
gigabytes, and step images copied from anywhere on the machine. Each is reproduced here; the
fuzz at the end mutates answer files at random and asserts that the good files always make it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image as PILImage
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.eval.datasets import load_dataset
from eviseek.eval.esibench.results import ImportLimits, import_results
from eviseek.eval.rundir import load_run
from tests.eval.esibench.conftest import FIXTURES
from tests.eval.esibench.test_import import answer_file

AGENT = "esibench-official"


def _questions() -> list[Any]:
    return list(load_dataset(f"esibench:{FIXTURES}?images=skip"))


def _rewrite(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _import(results: Path, out: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        app, ["esibench", "import", str(results), "--questions", str(FIXTURES), "--out", str(out), *extra]
    )


def test_every_bad_file_is_skipped_with_one_line_and_the_good_ones_are_imported(tmp_path: Path) -> None:
    qs = _questions()
    results = tmp_path / "results"
    steps = results / "steps"  # inside the results root: allowed without --step-images
    files = [answer_file(results, steps, q, "yes", task_name=f"t{i}") for i, q in enumerate(qs[:12])]
    good = files[0]
    step_dir = lambda f: Path(json.loads(f.read_text())["step_image_dir"])  # noqa: E731

    # 1. a truncated step image (a killed official runner), 2. a step image that is not an image
    noise = np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)
    PILImage.fromarray(noise).save(step_dir(files[1]) / "step_001.png")
    data = (step_dir(files[1]) / "step_001.png").read_bytes()
    (step_dir(files[1]) / "step_001.png").write_bytes(data[: len(data) // 2])
    (step_dir(files[2]) / "step_001.png").write_text("this is not a picture")
    # 3. a 400-Mpx PNG (a few KiB on disk)
    PILImage.new("1", (20000, 20000)).save(step_dir(files[3]) / "step_001.png")
    # 4. "step": 1e400, 5. 100,000 nested brackets, 6./7. lone surrogates
    files[4].write_text(files[4].read_text().replace('"step": 1', '"step": 1e400', 1))
    files[5].write_text('{"history": ' + "[" * 100_000 + "]" * 100_000 + "}")
    files[6].write_text(files[6].read_text().replace('"raw_output": "', '"raw_output": "\\ud800', 1))
    _rewrite(files[7], lambda d: d["final_answer"].update(answer="x"))
    files[7].write_text(files[7].read_text().replace('"answer": "x"', '"answer": "\\udfff"'))
    # 8. a step image anywhere else on the machine
    elsewhere = tmp_path / "private"
    elsewhere.mkdir()
    PILImage.fromarray(np.zeros((4, 4, 3), np.uint8)).save(elsewhere / "secret.png")
    _rewrite(files[8], lambda d: d["history"][0].update(image=str(elsewhere / "secret.png")))
    # 9. a FIFO named like an answer file, 10. an answer file over the size limit
    fifo = results / "t9" / "fifo_answer.json"
    fifo.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(fifo)
    files[10].write_text(files[10].read_text() + " " * (2 * 2**20))
    # 11. a step image that is a folder
    (step_dir(files[11]) / "step_002.png").unlink()
    (step_dir(files[11]) / "step_002.png").mkdir()

    run = tmp_path / "run"
    res = _import(results, run, "--max-answer-mb", "1")
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    assert "imported 2 answer file(s)" in res.output
    lines = [line for line in res.output.splitlines() if line.startswith("skipped ")]
    why = {Path(line.split(": ", 1)[0].removeprefix("skipped ")): line for line in lines}
    assert len(why) == len(lines) == 11, res.output
    assert "cannot be read as an image" in why[files[1]] and "truncated" in why[files[1]]
    assert "cannot be read as an image" in why[files[2]]
    assert "20000x20000 pixels, over the import's limit of 64 Mpx" in why[files[3]]
    assert "OverflowError" in why[files[4]] or "infinity" in why[files[4]]
    assert "nests too deeply" in why[files[5]]
    assert "lone surrogate" in why[files[6]] and "lone surrogate" in why[files[7]]
    assert "outside the results root" in why[files[8]] and "--step-images" in why[files[8]]
    assert "not a regular file" in why[fifo]
    assert "over the import's limit of 1 MiB (--max-answer-mb" in why[files[10]]
    assert "not a regular file" in why[files[11]] or "Directory" in why[files[11]]
    got = load_run(run).results[AGENT]
    assert sorted(got) == sorted([qs[0].id, qs[9].id]) and good.is_file()
    assert not run.with_name("run.importing").exists()
    score = CliRunner().invoke(app, ["score", str(run), "--json"])
    assert score.exit_code == 0, score.output

    # The image outside is allowed once its folder is named.
    shutil.rmtree(run)
    allowed = _import(results, run, "--max-answer-mb", "1", "--step-images", str(elsewhere))
    assert allowed.exit_code == 0 and "imported 3 answer file(s)" in allowed.output, allowed.output


def test_a_rerun_after_removing_a_bad_file_works_and_no_half_run_is_left(tmp_path: Path) -> None:
    qs = _questions()
    results = tmp_path / "results"
    answer_file(results, results / "steps", qs[0], "yes", task_name="a")
    bad = answer_file(results, results / "steps", qs[1], "yes", task_name="b")
    bad.write_text('{"history": ' + "[" * 100_000)
    run = tmp_path / "run"
    # What an interrupted import leaves behind is cleared by the next one.
    leftover = tmp_path / "run.importing"
    (leftover / "episodes").mkdir(parents=True)
    (leftover / ".eviseek-import").write_text("")
    first = _import(results, run)
    assert first.exit_code == 0 and "imported 1 answer file(s)" in first.output, first.output
    assert not leftover.exists()
    assert _import(results, run).exit_code == 1  # a finished run is never imported into twice
    bad.unlink()
    answer_file(results, results / "steps", qs[1], "yes", task_name="b")
    shutil.rmtree(run)
    again = _import(results, run)
    assert again.exit_code == 0 and "imported 2 answer file(s)" in again.output, again.output
    assert len(load_run(run).results[AGENT]) == 2


def test_out_that_is_a_file_or_a_non_empty_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    results = tmp_path / "results"
    answer_file(results, results / "steps", _questions()[0], "yes", task_name="a")
    a_file = tmp_path / "file"
    a_file.write_text("x")
    res = _import(results, a_file)
    assert res.exit_code == 2 and "is a file" in res.output and "Traceback" not in res.output
    full = tmp_path / "full"
    full.mkdir()
    (full / "results.sqlite").write_text("")  # a half run of an older eviseek
    res = _import(results, full)
    assert res.exit_code == 1 and "is not empty and holds no run" in res.output
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _import(results, empty).exit_code == 0
    for flag in ("--max-answer-mb", "--max-image-mb", "--max-image-mpx"):
        for value in ("nan", "inf", "0", "-1"):
            res = _import(results, tmp_path / "never", flag, value)
            assert res.exit_code == 2 and "finite number" in res.output, (flag, value, res.output)


# -- fuzz -----------------------------------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_KEYS = ["step", "action", "answer", "image", "raw_output", "action_result", "confidence"]


@st.composite
def _mutation(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(st.sampled_from(["top", "final", "history", "item", "bytes", "cut"]))
    if kind == "top":
        return kind, (draw(st.sampled_from(["source_json", "final_answer", "history", "model"])), draw(_JSON))
    if kind == "final":
        return kind, (draw(st.sampled_from(["answer", "stopped_by"])), draw(_JSON))
    if kind == "item":
        return kind, (draw(st.sampled_from(_KEYS)), draw(_JSON))
    if kind == "history":
        return kind, draw(_JSON)
    if kind == "bytes":
        return kind, draw(st.binary(max_size=40))
    return kind, draw(st.integers(min_value=0, max_value=400))


def _mutate(path: Path, mutation: tuple[str, Any]) -> None:
    kind, value = mutation
    text = path.read_text()
    if kind == "bytes":
        path.write_bytes(value)
        return
    if kind == "cut":
        path.write_text(text[:value])
        return
    data = json.loads(text)
    if kind == "top":
        data[value[0]] = value[1]
    elif kind == "final":
        data["final_answer"][value[0]] = value[1]
    elif kind == "history":
        data["history"] = value
    else:
        data["history"][0][value[0]] = value[1]
    path.write_text(json.dumps(data))  # json writes NaN/Infinity and any str, surrogates too


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=st.lists(_mutation(), min_size=1, max_size=4))
def test_fuzzed_answer_files_never_raise_and_the_good_files_are_always_imported(
    tmp_path_factory: Any, mutations: list[tuple[str, Any]]
) -> None:
    base = tmp_path_factory.mktemp("fuzz")
    qs = _questions()
    results = base / "results"
    good = [
        answer_file(results, results / "steps", q, "yes", task_name=f"g{i}") for i, q in enumerate(qs[:2])
    ]
    for i, mutation in enumerate(mutations):
        # Fuzzed files answer other questions, so a good file is never the second for its question.
        path = answer_file(results, results / "steps", qs[2 + i], "no", task_name=f"f{i}")
        _mutate(path, mutation)
    report = import_results(results, qs, base / "run", limits=ImportLimits())
    imported = load_run(base / "run").results[AGENT]
    assert {qs[0].id, qs[1].id} <= set(imported), report.problems
    assert report.imported == len(imported)
    assert report.imported + len(report.problems) + len(report.official_skips) == len(good) + len(mutations)
    assert all("\n" not in p for p in report.problems)

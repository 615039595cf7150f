"""``eviseek eval --image-size``: every environment that can render at another size does, in
threads and in worker processes; one that cannot is refused with one line before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from eviseek import env_ids
from eviseek.cli.main import app
from eviseek.envs.house import build_question
from eviseek.envs.registry import resizable
from eviseek.types import Question


def _frames(run: Path) -> set[tuple[int, int]]:
    return {Image.open(p).size for p in (run / "episodes").rglob("*.png")}


@pytest.mark.parametrize("workers", ["0", "1"])
def test_house_frames_at_the_size_asked(tmp_path: Path, workers: str) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(build_question("state", 8, 0).model_dump_json() + "\n")
    run = tmp_path / "run"
    args = [
        "eval",
        "--out",
        str(run),
        "--agents",
        "passive",
        "--model",
        "reference",
        "--dataset",
        str(questions),
    ]
    res = CliRunner().invoke(app, [*args, "--image-size", "96x64", "--env-workers", workers])
    assert res.exit_code == 0, res.output
    assert _frames(run) == {(96, 64)}
    # Resuming at another size would mix frame sizes in one run: refused by name.
    res = CliRunner().invoke(app, [*args, "--image-size", "64x64", "--env-workers", workers])
    assert res.exit_code != 0 and "image_size" in res.output


def test_sizes_follow_what_each_environment_can_render() -> None:
    assert resizable(env_ids.HOUSE) and resizable(env_ids.TABLETOP)
    assert not resizable(env_ids.IMAGE_ZOOM)


def test_an_environment_of_one_size_is_refused_in_one_line(tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    q = Question(id="zoom-1", text="Which letter is on the tag?", env_id=env_ids.IMAGE_ZOOM)
    questions.write_text(q.model_dump_json() + "\n")
    run = tmp_path / "run"
    args = [
        "eval",
        "--out",
        str(run),
        "--agents",
        "passive",
        "--model",
        "reference",
        "--dataset",
        str(questions),
    ]
    res = CliRunner().invoke(app, [*args, "--image-size", "512x512", "--env-workers", "0"])
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert res.exit_code == 2 and len(lines) == 1, res.output
    assert lines[0].startswith("error: --image-size 512x512: eviseek/ImageZoom-v0 renders at its own size")
    for bad in ("512", "0x512", "axb", "9000x10"):
        res = CliRunner().invoke(app, [*args, "--image-size", bad])
        assert res.exit_code == 2 and "--image-size" in res.output and "Traceback" not in res.output, bad

"""Deterministic generation, question files, splits and the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.envs.tabletop import generate_questions, load_split, read_questions, write_questions
from eviseek.envs.tabletop.generate import SPLITS, split_dir

# Physics in ground truth, reference images, ray-cast ground truth, replayed moves + references.
SUBS = ["stacking_and_stability", "unobserved_change", "connectivity", "action_order_inference"]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_gives_byte_identical_files_in_process_and_from_the_cli(tmp_path: Path) -> None:
    write_questions(tmp_path / "a", generate_questions(2, 7, subcategories=SUBS), image_dir="images")
    cmd = [
        sys.executable,
        "-m",
        "eviseek",
        "tabletop",
        "generate",
        "--out",
        str(tmp_path / "b"),
        "-n",
        "2",
        "--seed",
        "7",
    ]
    for s in SUBS:
        cmd += ["--subcategory", s]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a == b
    # 8 initial images + 2 reference images (Unobserved Change's; Action Order Inference's first
    # two questions are ESI-Bench's three-object form, which has none)
    assert sum(k.endswith(".png") for k in a) == 10
    write_questions(tmp_path / "c", generate_questions(2, 8, subcategories=SUBS), image_dir="images")
    assert _files(tmp_path / "c")["questions.jsonl"] != a["questions.jsonl"]


def test_question_file_round_trip_rebuilds_the_scene(tmp_path: Path) -> None:
    qs = generate_questions(1, 2, subcategories=["geometric_configuration"])
    write_questions(tmp_path, qs, image_dir="images")
    (back,) = read_questions(tmp_path / "questions.jsonl")
    assert back.model_dump(exclude={"initial_image"}) == qs[0].model_dump(exclude={"initial_image"})
    assert back.initial_image is not None and Path(back.initial_image.path or "").is_absolute()
    assert (back.initial_image.array() == qs[0].initial_image.array()).all()  # type: ignore[union-attr]
    # The environment rebuilt from the record alone renders exactly the stored initial image.
    from eviseek.envs.tabletop import TabletopEnv

    env = TabletopEnv()
    try:
        obs, _ = env.reset(options={"question": back})
        assert (obs.image.array() == back.initial_image.array()).all()
    finally:
        env.close()


def test_dev_split_is_generated_once_and_cached(tmp_path: Path) -> None:
    qs = load_split("dev", cache_dir=tmp_path)
    per = SPLITS["dev"].n_per_subcategory
    subs = {q.subcategory for q in qs}
    assert len(qs) == per * len(subs) and len(subs) >= 9
    assert len({q.id for q in qs}) == len(qs)
    stamp = (split_dir("dev", tmp_path) / "questions.jsonl").stat().st_mtime_ns
    again = load_split("dev", cache_dir=tmp_path)
    assert [q.id for q in again] == [q.id for q in qs]
    assert (split_dir("dev", tmp_path) / "questions.jsonl").stat().st_mtime_ns == stamp
    assert SPLITS["test"].n_per_subcategory >= 30


def test_paper_split_weights_subcategories_like_esi_bench(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eviseek.envs.tabletop import paper_split
    from eviseek.envs.tabletop.families import slugs

    counts = paper_split.paper_counts(slugs=slugs())
    # Every tabletop family has a paper count, and the paper's 29 sum to its 3,436 questions.
    assert set(counts) == set(slugs()) == set(paper_split.PAPER_QUESTIONS)
    assert sum(paper_split.PAPER_QUESTIONS.values()) + sum(paper_split.HOUSE_ONLY.values()) == 3436
    assert sum(counts.values()) == round(0.1 * 3236)
    for slug, n in counts.items():  # a tenth of #Q, off by under one question, never zero
        assert n >= 1 and abs(n - paper_split.PAPER_QUESTIONS[slug] / 10) < 1
    assert counts["geometric_configuration"] == 57 and counts["counting_with_occlusion"] == 3
    # The split is generated from those counts (patched small here: the real one is 324 questions).
    monkeypatch.setattr(
        paper_split, "paper_counts", lambda slugs: {"linear_alignment": 2, "spatial_distance": 1}
    )
    qs = load_split("paper", cache_dir=tmp_path)
    assert [q.metadata["slug"] for q in qs] == ["linear_alignment", "linear_alignment", "spatial_distance"]
    assert all(q.metadata["seed"] == SPLITS["paper"].seed for q in qs)


def test_unknown_split_and_missing_file_are_clear_errors(tmp_path: Path) -> None:
    from eviseek.errors import ConfigError

    with pytest.raises(ConfigError, match="dev"):
        load_split("train", cache_dir=tmp_path)
    with pytest.raises(ConfigError, match="generate"):
        read_questions(tmp_path / "nothing.jsonl")


def test_cli_render_and_stats(tmp_path: Path) -> None:
    write_questions(
        tmp_path, generate_questions(1, 4, subcategories=["partial_occlusion", "linear_alignment"])
    )
    qid = read_questions(tmp_path)[0].id
    runner = CliRunner()
    png = tmp_path / "v.png"
    res = runner.invoke(
        app,
        [
            "tabletop",
            "render",
            str(tmp_path),
            "--id",
            qid,
            "--actions",
            "move_up,turn_down",
            "--out",
            str(png),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "move_up: ok" in res.output and "turn_down" in res.output and "pose: " in res.output
    assert "move_up: move_up" not in res.output  # the action's name is printed once per line
    assert png.read_bytes()[:4] == b"\x89PNG"
    res = runner.invoke(app, ["tabletop", "render", str(tmp_path), "--id", "nope", "--out", str(png)])
    assert res.exit_code != 0
    # An action the question does not offer is a mistake on the command line: refused before
    # anything runs, with the legal names on the same line.
    png.unlink()
    args = ["tabletop", "render", str(tmp_path), "--id", qid, "--actions", "move_up,jump", "--out", str(png)]
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output  # a bad --actions value
    (line,) = res.output.strip().splitlines()
    assert line.startswith("error: unknown action 'jump'") and "move_up" in line and "turn_left" in line
    assert not png.exists()
    res = runner.invoke(app, ["tabletop", "stats", "--questions", str(tmp_path / "questions.jsonl")])
    assert res.exit_code == 0, res.output
    assert "Partial Occlusion" in res.output and "Linear Alignment" in res.output


def test_parse_actions_reads_arguments() -> None:
    from eviseek.cli.tabletop import parse_actions

    assert parse_actions("turn_left, put_on(object=red_cube, target=blue_cube),stop") == [
        ("turn_left", {}),
        ("put_on", {"object": "red_cube", "target": "blue_cube"}),
        ("stop", {}),
    ]


def test_pybullets_build_time_banner_is_not_printed(tmp_path: Path) -> None:
    # PyBullet's C code prints "pybullet build time: ..." when it loads; a command must not.
    import os
    import subprocess
    import sys

    src = Path(__file__).resolve().parents[3] / "src"
    cmd = [sys.executable, "-m", "eviseek", "tabletop", "generate", "-n", "1", "-s", "partial_occlusion"]
    out = subprocess.run(
        [*cmd, "--out", str(tmp_path), "--width", "64", "--height", "48"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(src)},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "build time" not in out.stdout + out.stderr
    assert out.stdout.startswith("wrote 1 questions")

"""``eviseek house generate`` and ``eviseek house render``."""

from __future__ import annotations

from pathlib import Path

from PIL import Image
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.types.question_file import read_questions


def test_generate_then_render(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "set"
    args = ["house", "generate", "--seed", "7", "-n", "1", "--kind", "attribute", "--kind", "counting"]
    res = runner.invoke(app, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    qs = read_questions(out / "questions.jsonl")
    assert [q.id for q in qs] == ["house-attribute-s7-0000", "house-counting-s7-0000"]
    again = tmp_path / "again"
    assert runner.invoke(app, [*args, "--out", str(again)]).exit_code == 0
    assert (out / "questions.jsonl").read_bytes() == (again / "questions.jsonl").read_bytes()
    png = tmp_path / "view.png"
    render = ["house", "render", str(out), "--id", qs[0].id, "-a", "turn_left,move_forward", "-o", str(png)]
    res = runner.invoke(app, [*render, "--width", "80", "--height", "60"])
    assert res.exit_code == 0, res.output
    assert Image.open(png).size == (80, 60) and "turn_left" in res.output and "support" in res.output
    res = runner.invoke(app, ["house", "render", str(out), "--id", qs[0].id, "-a", "look_up", "-o", str(png)])
    assert res.exit_code == 2 and "legal actions" in res.output


def test_generate_a_sample_of_a_split(tmp_path: Path) -> None:
    out = tmp_path / "dev-1"
    res = CliRunner().invoke(app, ["house", "generate", "--split", "dev", "--first", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    qs = read_questions(out / "questions.jsonl")
    assert len(qs) == 10 and all(q.id.endswith("-s3000-0000") for q in qs)


def test_render_of_a_missing_file_says_how_to_make_a_house_set(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["house", "render", str(tmp_path / "nowhere"), "--id", "q"])
    assert res.exit_code == 1, res.output
    assert "error:" in res.output and "eviseek house generate" in res.output
    assert "tabletop" not in res.output and "Traceback" not in res.output


def test_an_unknown_kind_is_one_line_naming_the_kinds(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["house", "generate", "--kind", "relation", "--kind", "colour", "--out", str(tmp_path / "x")]
    )
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: unknown house question kinds")
    assert (
        "knowledge" in lines[0] and "'relation' is now 'object'" in lines[0] and "Traceback" not in res.output
    )

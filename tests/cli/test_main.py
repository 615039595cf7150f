"""The CLI starts without heavy imports."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "transformers", "trl", "pybullet", "ray", "datasets", "gymnasium")


def test_import_and_help_load_no_heavy_dependency() -> None:
    code = (
        "import sys, eviseek, eviseek.cli.main as m\n"
        "from typer.testing import CliRunner\n"
        "r = CliRunner().invoke(m.app, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        f"print(','.join(x for x in {HEAVY!r} if x in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"heavy modules imported at start-up: {out.stdout}"


def test_models_check_with_scripted_echo() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "eviseek", "models", "check", "--model", "scripted/echo"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "1 image(s)" in out.stdout and "latency:" in out.stdout


def test_models_check_bad_id_is_one_line_error() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "eviseek", "models", "check", "--model", "nope/x"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    assert out.stderr.strip().startswith("error: unknown model provider")
    assert len(out.stderr.strip().splitlines()) == 1

"""docs/reference/cli.md is the ``--help`` of every command, regenerated here and compared.

A new command, flag or changed help text fails this test until ``python scripts/cli_reference.py``
rewrites the page, so the reference can never fall behind the code.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "scripts" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_matches_the_code() -> None:
    gen = _generator()
    expected = gen.render()
    actual = gen.PAGE.read_text(encoding="utf-8")
    assert actual == expected, "docs/reference/cli.md is out of date: run python scripts/cli_reference.py"


def test_every_command_and_flag_is_on_the_page() -> None:
    gen = _generator()
    page = gen.PAGE.read_text(encoding="utf-8")
    commands = gen._commands()
    assert len(commands) >= 20  # 13 top-level commands and the groups' subcommands
    for path, _ in commands:
        assert f"`{' '.join(['eviseek', *path])}`" in page
    # Spot-check flags the tutorials use.
    for flag in ("--limit", "--model", "--base-url", "--agents", "--retry-failed", "--plugin"):
        assert re.search(rf"{flag}\b", page), flag

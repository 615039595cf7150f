"""The shared JSONL reader: values with their line numbers, blank lines skipped, one error style."""

from __future__ import annotations

from pathlib import Path

import pytest

from eviseek.errors import ConfigError
from eviseek.models.scripted import ScriptedModel
from eviseek.types.jsonl import read_jsonl


def test_values_come_with_their_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n  \n"text"\n[1, 2]\n', encoding="utf-8")
    assert list(read_jsonl(path)) == [(1, {"a": 1}), (4, "text"), (5, [1, 2])]


def test_invalid_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('"ok"\n{"a": \n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.jsonl:2: not valid JSON"):
        list(read_jsonl(path))


def test_scripted_replies_use_the_same_error_style(tmp_path: Path) -> None:
    path = tmp_path / "replies.jsonl"
    path.write_text('"first"\n{"text": "second"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"replies\.jsonl:3: not valid JSON"):
        ScriptedModel.read_jsonl(path)
    path.write_text('"first"\n{"text": "second"}\n', encoding="utf-8")
    assert ScriptedModel.read_jsonl(path) == ["first", "second"]

"""``eviseek train autotool`` configs: files parse, bad combinations are refused with a fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.errors import ConfigError
from eviseek.train.autotool_config import load_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "configs"


def _write(tmp: Path, data: dict[str, Any], name: str = "c.json") -> Path:
    p = tmp / name
    p.write_text(json.dumps(data))
    return p


BASE: dict[str, Any] = {
    "tiny_model": {},
    "data": {"synthetic": {"n": 4}},
    "grpo": {
        "max_steps": 3,
        "num_generations": 2,
        "per_device_train_batch_size": 4,
        "max_completion_length": 160,
    },
}


def _with(**changes: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(BASE))
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split("__")
        for part in parents:
            node = node.setdefault(part, {})
        if value is _DROP:
            node.pop(last, None)
        else:
            node[last] = value
    return data


_DROP = object()


def test_example_configs_are_valid() -> None:
    tiny = load_config(EXAMPLES / "autotool_trl_tiny.yaml")
    assert tiny.tiny_model is not None and tiny.warmup.steps > 0
    real = load_config(EXAMPLES / "autotool_trl_qwen3vl8b.yaml")
    assert real.model == "Qwen/Qwen3-VL-8B-Instruct" and real.amb.release_at == 60
    assert real.grpo.num_generations == 16 and real.grpo.learning_rate == 1e-6


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"model": "x"}, "exactly one of 'model'"),
        ({"tiny_model": _DROP}, "exactly one of 'model'"),
        ({"grpo__per_device_train_batch_size": 3}, "multiple of grpo.num_generations"),
        ({"grpo__max_completion_length": 40}, "cannot hold a tool call"),
        ({"amb": {"release_step": 10}}, "after the run ends"),
        ({"amb": {"total_steps": 80, "release_last": 20}}, "set them equal"),
        ({"data": {}}, "exactly one source"),
        ({"data": {"synthetic": {"n": 2}, "file": {"path": "x", "layout": "vstar"}}}, "exactly one source"),
        ({"grpo__use_vllm": True}, "use_vllm needs a GPU"),
        ({"rewards": {"on_wrong": 0.5}}, "reward wrong answers"),
        ({"grpo__learning_rate_typo": 1}, "grpo.learning_rate_typo: unknown setting"),
        ({"data": {"file": {"path": "x", "layout": "csv"}}}, "data.file.layout"),
    ],
)
def test_bad_combinations_are_refused_with_a_fix(
    tmp_path: Path, changes: dict[str, Any], needle: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_write(tmp_path, _with(**changes)))
    assert needle in str(info.value)
    assert "c.json" in str(info.value)


def test_files_overrides_and_relative_paths(tmp_path: Path) -> None:
    yaml_text = (
        "tiny_model: {}\ndata:\n  file: {path: rows.jsonl, layout: saved}\n"
        "grpo: {num_generations: 2, per_device_train_batch_size: 2, max_completion_length: 100}\n"
    )
    p = tmp_path / "sub" / "c.yaml"
    p.parent.mkdir()
    p.write_text(yaml_text)
    cfg = load_config(p, {"grpo.max_steps": 5, "amb.release_step": 4})
    assert cfg.grpo.max_steps == 5 and cfg.amb.release_at == 4
    assert cfg.data.file is not None and cfg.data.file.path == p.parent / "rows.jsonl"
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")
    (tmp_path / "c.toml").write_text("x = 1")
    with pytest.raises(ConfigError, match=r"\.yaml, \.yml or \.json"):
        load_config(tmp_path / "c.toml")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(tmp_path / "list.json")


def test_cli_check_and_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(
        app,
        [
            "train",
            "autotool",
            "--config",
            str(EXAMPLES / "autotool_trl_tiny.yaml"),
            "--check",
            "--max-steps",
            "7",
            "--set",
            "amb.release_step=5",
        ],
    )
    assert ok.exit_code == 0, ok.output
    shown = json.loads(ok.output)
    assert shown["grpo"]["max_steps"] == 7 and shown["amb"]["release_step"] == 5
    bad = runner.invoke(
        app,
        [
            "train",
            "autotool",
            "--config",
            str(_write(tmp_path, _with(grpo__max_completion_length=8))),
            "--check",
        ],
    )
    assert bad.exit_code == 2
    assert "cannot hold a tool call" in bad.output
    malformed = runner.invoke(
        app, ["train", "autotool", "--config", str(EXAMPLES / "autotool_trl_tiny.yaml"), "--set", "novalue"]
    )
    assert malformed.exit_code == 2 and "key.sub=value" in malformed.output

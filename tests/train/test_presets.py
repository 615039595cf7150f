"""Presets: the paper's component-table rows load into valid configs that mean what they say."""

from __future__ import annotations

from pathlib import Path

import pytest

from eviseek.errors import ConfigError
from eviseek.train.autotool_config import load_config
from eviseek.train.presets import COMPONENT_TABLE_ROWS, PRESETS

CONFIG = Path(__file__).resolve().parents[2] / "examples" / "configs" / "autotool_learning_run.yaml"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_validates(name: str) -> None:
    cfg = load_config(CONFIG, preset=name)
    assert cfg.rewards.weights()[:2] == [0.8, 0.2]


def test_presets_mean_what_the_component_table_says() -> None:
    text = load_config(CONFIG, preset="text_only")
    assert not text.zoom.enabled and text.rewards.tool_scheme == "none" and len(text.rewards.weights()) == 2
    assert text.grpo.force_mode == "tool_off"  # the tool is never offered, <tool_on> never sampled
    always = load_config(CONFIG, preset="always_tool")
    # DeepEyes always zooms: <tool_off> can never be sampled.
    assert always.rewards.tool_scheme == "deepeyes" and always.grpo.force_mode == "tool_on"
    assert load_config(CONFIG, preset="autotool").grpo.force_mode is None
    fixed = load_config(CONFIG, preset="fixed_ratio")
    assert fixed.amb.release_at is None and fixed.rewards.on_wrong == 0.0
    penalty = load_config(CONFIG, preset="penalty")
    assert penalty.amb.release_at is None and penalty.rewards.on_wrong == -0.5
    release = load_config(CONFIG, preset="release")
    last_quarter = release.grpo.max_steps - round(release.grpo.max_steps / 4)
    assert release.amb.release_at == last_quarter and release.rewards.on_wrong == 0.0
    full = load_config(CONFIG, preset="autotool")
    assert (
        full.amb.release_at == last_quarter
        and full.rewards.on_wrong == -0.5
        and full.rewards.tool_scheme == "mspo"
    )
    assert load_config(CONFIG, preset="no_amb").amb.gain == 0.0
    assert sorted(COMPONENT_TABLE_ROWS.values()) == [1, 2, 3, 4, 5, 6]


def test_overrides_apply_after_the_preset_and_unknown_presets_are_named() -> None:
    cfg = load_config(CONFIG, {"rewards.on_wrong": -0.2}, preset="penalty")
    assert cfg.rewards.on_wrong == -0.2
    with pytest.raises(ConfigError, match="unknown preset 'nope'; choose one of text_only"):
        load_config(CONFIG, preset="nope")


def test_text_only_needs_the_tool_reward_off(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("tiny_model: {}\ndata: {tag_grid: {n: 2}}\nzoom: {enabled: false}\n")
    with pytest.raises(ConfigError, match="tool_scheme: none"):
        load_config(bad)

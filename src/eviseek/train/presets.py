"""Named training presets: the rows of the AutoTool paper's component table (Table 4) and ablations.

A preset is a set of dotted config overrides applied before the user's own (``eviseek train
autotool --preset NAME`` or ``preset:`` in a config file). The paper's rows:

* ``text_only`` (#1): GRPO without the tool, accuracy and format rewards only. The tool is never
  offered: no tool list, a system prompt that names no tool or mode choice, and ``<tool_on>``
  suppressed at sampling (``grpo.force_mode: tool_off``).
* ``always_tool`` (#2, DeepEyes): every rollout zooms: ``<tool_off>`` is suppressed at sampling
  (``grpo.force_mode: tool_on``), with the tool reward of DeepEyes (1 for a crop and a correct
  answer), no AMB, no penalty.
* ``fixed_ratio`` (#3): MSPO with AMB holding the mode ratio all run long, no penalty, no release.
* ``penalty`` (#4): ``fixed_ratio`` plus the -0.5 penalty for a tool call with a wrong answer.
* ``release`` (#5): ``fixed_ratio`` plus AMB's release at the end (the last quarter of the steps).
* ``autotool`` (#6): everything (MSPO with the penalty, AMB, release): the defaults.

Ablations of the learning run (ours): ``no_amb`` (both coefficients fixed at the base all run
long) and ``no_penalty`` (the full recipe with ``on_wrong: 0``).

The rows that hold AMB (:data:`HOLDS_AMB`) must never release, whatever the config file says:
otherwise a config with ``amb.release_last: 20`` turns ``fixed_ratio`` into ``release`` and
``penalty`` into ``autotool``. :func:`eviseek.train.autotool_config.load_config` therefore drops
the file's release settings under those presets and refuses an explicit override that would
release.
"""

from __future__ import annotations

from typing import Any

PRESETS: dict[str, dict[str, Any]] = {
    "text_only": {"zoom.enabled": False, "rewards.tool_scheme": "none", "grpo.force_mode": "tool_off"},
    "always_tool": {"rewards.tool_scheme": "deepeyes", "rewards.on_wrong": 0.0, "grpo.force_mode": "tool_on"},
    "fixed_ratio": {"rewards.on_wrong": 0.0, "amb.release_fraction": None},
    "penalty": {"amb.release_fraction": None},
    "release": {"rewards.on_wrong": 0.0},
    "autotool": {},
    "no_amb": {"amb.gain": 0.0},
    "no_penalty": {"rewards.on_wrong": 0.0},
}
"""Preset name -> dotted overrides (see the module docstring for what each row means)."""

HOLDS_AMB: frozenset[str] = frozenset({"fixed_ratio", "penalty"})
"""Presets whose AMB never releases (rows #3 and #4): they win over the config's release settings."""

RELEASE_KEYS: tuple[str, ...] = ("release_step", "release_last", "release_fraction")
"""The ``amb`` settings that decide when AMB releases (see :attr:`eviseek.train.amb.AMBConfig.release_at`)."""

COMPONENT_TABLE_ROWS: dict[str, int] = {
    "text_only": 1,
    "always_tool": 2,
    "fixed_ratio": 3,
    "penalty": 4,
    "release": 5,
    "autotool": 6,
}
"""The row number of each preset in the paper's Table 4."""


def preset_overrides(name: str) -> dict[str, Any]:
    """The overrides of a preset; an unknown name raises a ``KeyError`` that lists the known ones."""
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    return dict(PRESETS[name])

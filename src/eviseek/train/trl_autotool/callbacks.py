"""Trainer callbacks: every AMB update to ``amb.jsonl``, and each step's cost by mode to
``mode_cost.jsonl``, as training goes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from eviseek._lazy import require
from eviseek.train.amb import AMBController


def _callback_base() -> Any:
    transformers = require("transformers", "train", "AutoTool training")
    return transformers.TrainerCallback


class AMBLogCallback:
    """Writes each AMB update (step, ratio, both lambdas) to a JSONL file as training goes.

    Built through :func:`make_amb_callback` so that transformers is imported lazily; the
    instance is a real ``TrainerCallback``.
    """

    def __init__(self, controller: AMBController, path: Path) -> None:
        self.controller = controller
        self.path = path
        self._written = 0

    def flush(self) -> None:
        """Append the updates not yet written."""
        new = self.controller.history[self._written :]
        if not new:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            for state in new:
                fh.write(state.model_dump_json() + "\n")
        self._written += len(new)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self.flush()
        return control

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self.flush()
        return control


def make_amb_callback(controller: AMBController, path: Path) -> Any:
    """An :class:`AMBLogCallback` that is also a ``transformers.TrainerCallback``."""
    base = _callback_base()
    cls = type("AMBTrainerCallback", (AMBLogCallback, base), {})
    return cls(controller, path)


class ModeCostCallback:
    """Writes each GRPO step's wall time and its rollouts' tokens, split by the mode each rollout
    chose, to a JSONL file (the paper's Table 8 compares training time per mode setting; these
    numbers let that comparison be made on any hardware).

    One line per step: ``step``, ``seconds`` (wall time of the whole step: generation, tool
    calls, rewards, the update) and, per mode (``tool_on``, ``tool_off``, ``no_mode``), the
    number of rollouts and their completion tokens (tool replies and their image tokens
    included). ``monitor`` is the reward wrapper that counts them
    (:meth:`~eviseek.train.trl_autotool.reward_wrappers.FullRolloutReward.take_cost`).
    """

    def __init__(self, monitor: Any, path: Path) -> None:
        self.monitor = monitor
        self.path = path
        self.steps: list[dict[str, Any]] = []
        self._start: float | None = None

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self._start = time.perf_counter()
        return control

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        seconds = time.perf_counter() - self._start if self._start is not None else None
        record = {"step": int(state.global_step), "seconds": seconds, "modes": self.monitor.take_cost()}
        self.steps.append(record)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
        return control


def make_mode_cost_callback(monitor: Any, path: Path) -> Any:
    """A :class:`ModeCostCallback` that is also a ``transformers.TrainerCallback``."""
    cls = type("ModeCostTrainerCallback", (ModeCostCallback, _callback_base()), {})
    return cls(monitor, path)


def mode_cost_summary(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over a run's :class:`ModeCostCallback` records: steps, wall seconds, and per mode
    the rollouts, tokens and tokens per rollout. ``seconds_by_token_share`` splits the wall time
    in proportion to each mode's tokens: an estimate (rollouts of both modes share every
    batched step), labelled as such wherever it is shown."""
    seconds = sum(float(s["seconds"] or 0.0) for s in steps)
    modes: dict[str, dict[str, float]] = {}
    for s in steps:
        for mode, c in s["modes"].items():
            m = modes.setdefault(mode, {"rollouts": 0.0, "tokens": 0.0})
            m["rollouts"] += c["rollouts"]
            m["tokens"] += c["tokens"]
    total_tokens = sum(m["tokens"] for m in modes.values()) or 1.0
    for m in modes.values():
        m["tokens_per_rollout"] = m["tokens"] / max(1.0, m["rollouts"])
        m["seconds_by_token_share"] = seconds * m["tokens"] / total_tokens
    return {"steps": len(steps), "seconds": seconds, "modes": modes}

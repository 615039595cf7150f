"""Adaptive Mode Balancing (AMB): per-mode tool-reward coefficients that keep both modes alive.

The AutoTool paper scales the mode-specific tool reward by a coefficient per mode,
``lambda_on`` and ``lambda_off``, starting from a base of 1.2, adjusts them from the mode ratio
observed during training so that neither mode starves, and at the end of training (the last
20 of 80 steps in the paper; removal at about step 60 worked best) sets both back to the base
so the policy chooses freely. The paper gives no closed formula for the adjustment, so this
module uses a simple, bounded, deterministic rule (documented on :class:`AMBConfig`):

    d          = ratio_on - target_on                 (how far tool-on is above its target)
    lambda_on  = base * clip(1 - gain * d, min_scale, max_scale)
    lambda_off = base * clip(1 + gain * d, min_scale, max_scale)

so the under-used mode's correct rollouts earn more than the over-used mode's, in proportion
to the imbalance. With the defaults (target 0.5, gain 2) a batch that is all tool-off gives
``lambda_on = 2 * base`` and ``lambda_off = min_scale * base``; a balanced batch gives base for
both. ``ratio_on`` is the batch's share of tool-on rollouts among those that declared a mode,
optionally smoothed by an exponential moving average across batches (``ema``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field, model_validator

log = logging.getLogger(__name__)


class AMBConfig(BaseModel):
    """Settings of the controller. Validation rejects combinations that cannot work."""

    base: float = Field(default=1.2, ge=0.0)
    """``lambda_tool^base``: both coefficients start here and return here on release."""
    target_on: float = Field(default=0.5, gt=0.0, lt=1.0)
    """The tool-on share the controller steers towards while active."""
    gain: float = Field(default=2.0, ge=0.0)
    """How strongly a deviation from the target moves the coefficients."""
    min_scale: float = Field(default=0.25, ge=0.0)
    max_scale: float = Field(default=2.0, gt=0.0)
    ema: float = Field(default=0.0, ge=0.0, lt=1.0)
    """Weight of the previous smoothed ratio (0: use each batch's ratio as is)."""
    release_step: int | None = Field(default=None, ge=0)
    """From this training step on, both coefficients equal ``base``. ``None``: see
    ``total_steps``/``release_last``; if neither is set the controller never releases."""
    total_steps: int | None = Field(default=None, ge=1)
    release_last: int | None = Field(default=None, ge=0)
    """Release for the last ``release_last`` of ``total_steps`` steps (paper: 20 of 80)."""

    @model_validator(mode="after")
    def _check(self) -> AMBConfig:
        if self.min_scale > self.max_scale:
            raise ValueError(
                f"min_scale ({self.min_scale}) must not exceed max_scale ({self.max_scale}); "
                "swap them or widen the range"
            )
        if not self.min_scale <= 1.0 <= self.max_scale:
            raise ValueError(
                "min_scale <= 1 <= max_scale is required so a balanced batch keeps the base coefficient"
            )
        if (self.total_steps is None) != (self.release_last is None):
            raise ValueError("set total_steps and release_last together (e.g. 80 and 20), or neither")
        if self.release_step is not None and self.total_steps is not None:
            raise ValueError("give either release_step or total_steps/release_last, not both")
        if (
            self.total_steps is not None
            and self.release_last is not None
            and self.release_last > self.total_steps
        ):
            raise ValueError(f"release_last ({self.release_last}) exceeds total_steps ({self.total_steps})")
        return self

    @property
    def release_at(self) -> int | None:
        """The first released step, or ``None`` when the controller never releases."""
        if self.release_step is not None:
            return self.release_step
        if self.total_steps is not None and self.release_last is not None:
            return self.total_steps - self.release_last
        return None


class AMBState(BaseModel):
    """One update of the controller: what it saw and the coefficients it set."""

    step: int
    n_on: int
    n_off: int
    n_none: int = 0
    """Rollouts that declared no mode (not counted in the ratio)."""
    ratio_on: float | None
    """The batch's tool-on share (``None`` when no rollout declared a mode)."""
    smoothed_on: float | None
    lambda_on: float
    lambda_off: float
    released: bool

    def metrics(self, prefix: str = "amb/") -> dict[str, float]:
        """Flat numbers for a training logger (the ratio is omitted when undefined)."""
        out = {
            f"{prefix}lambda_on": self.lambda_on,
            f"{prefix}lambda_off": self.lambda_off,
            f"{prefix}released": float(self.released),
            f"{prefix}n_on": float(self.n_on),
            f"{prefix}n_off": float(self.n_off),
        }
        if self.ratio_on is not None:
            out[f"{prefix}ratio_on"] = self.ratio_on
        return out


class AMBController:
    """Deterministic AMB: call :meth:`update` once per batch with the modes it produced.

    The controller is a plain picklable object (TRL may copy reward functions between
    processes). Every update is appended to :attr:`history`, which is the log of ratio and
    both coefficients per step.
    """

    def __init__(self, config: AMBConfig | None = None, **overrides: Any) -> None:
        base = config.model_dump() if config is not None else {}
        self.config = AMBConfig.model_validate({**base, **overrides})
        self.history: list[AMBState] = []
        self._smoothed: float | None = None

    @property
    def lambdas(self) -> tuple[float, float]:
        """The current ``(lambda_on, lambda_off)`` (base before the first update)."""
        if not self.history:
            return self.config.base, self.config.base
        last = self.history[-1]
        return last.lambda_on, last.lambda_off

    def coefficients(self, ratio_on: float | None, step: int) -> tuple[float, float, bool]:
        """The rule itself: ``(lambda_on, lambda_off, released)`` for a ratio at a step."""
        c = self.config
        release = c.release_at
        if release is not None and step >= release:
            return c.base, c.base, True
        if ratio_on is None:
            return (*self.lambdas, False)
        d = ratio_on - c.target_on
        scale_on = min(max(1.0 - c.gain * d, c.min_scale), c.max_scale)
        scale_off = min(max(1.0 + c.gain * d, c.min_scale), c.max_scale)
        return c.base * scale_on, c.base * scale_off, False

    def update(self, modes: Iterable[str | None], step: int) -> AMBState:
        """Record a batch's modes (``"tool_on"``, ``"tool_off"`` or ``None``) and set the coefficients."""
        n_on = n_off = n_none = 0
        for m in modes:
            if m == "tool_on":
                n_on += 1
            elif m == "tool_off":
                n_off += 1
            else:
                n_none += 1
        return self.update_counts(n_on, n_off, step, n_none=n_none)

    def update_counts(self, n_on: int, n_off: int, step: int, *, n_none: int = 0) -> AMBState:
        """Like :meth:`update` with the counts already made."""
        if min(n_on, n_off, n_none) < 0:
            raise ValueError("mode counts must be non-negative")
        total = n_on + n_off
        ratio = n_on / total if total else None
        if ratio is not None:
            a = self.config.ema
            self._smoothed = ratio if self._smoothed is None else a * self._smoothed + (1 - a) * ratio
        lam_on, lam_off, released = self.coefficients(self._smoothed if ratio is not None else None, step)
        state = AMBState(
            step=step,
            n_on=n_on,
            n_off=n_off,
            n_none=n_none,
            ratio_on=ratio,
            smoothed_on=self._smoothed,
            lambda_on=lam_on,
            lambda_off=lam_off,
            released=released,
        )
        self.history.append(state)
        log.info(
            "AMB step %d: ratio_on=%s lambda_on=%.4f lambda_off=%.4f%s",
            step,
            "n/a" if ratio is None else f"{ratio:.3f}",
            lam_on,
            lam_off,
            " (released)" if released else "",
        )
        return state

    def lambda_for(self, mode: str | None) -> float:
        """The current coefficient of ``mode`` (0 for a rollout that declared none)."""
        lam_on, lam_off = self.lambdas
        if mode == "tool_on":
            return lam_on
        if mode == "tool_off":
            return lam_off
        return 0.0

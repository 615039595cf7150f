"""Adaptive Mode Balancing (AMB): per-mode tool-reward coefficients that keep both modes alive.

The AutoTool paper scales the mode-specific tool reward by a coefficient per mode,
``lambda_on`` and ``lambda_off``, starting from a base of 1.2, adjusts them from the mode ratio
observed during training so that neither mode starves, and at the end of training (the last
20 of 80 steps in the paper; removal at about step 60 worked best) sets both back to the base
so the policy chooses freely. The paper gives no closed formula for the adjustment, so the
rule is ours and swappable (``AMBConfig.rule``); both are bounded and deterministic, with
``d = ratio_on - target_on`` (how far tool-on is above its target):

``multiplicative`` (the default)::

    lambda_on  = base * clip(1 - gain * d, min_scale, max_scale)
    lambda_off = base * clip(1 + gain * d, min_scale, max_scale)

  The under-used mode's correct rollouts earn more, in proportion to the imbalance. With the
  defaults (target 0.5, gain 2) an all-tool-off batch gives ``lambda_on = 2 * base`` and
  ``lambda_off = min_scale * base``. Every coefficient is a multiple of the base, so at
  ``base = 0`` both are 0 whatever the ratio.

``additive``::

    lambda_on  = clip(base - gain * d, 0, base + max_shift)
    lambda_off = clip(base + gain * d, 0, base + max_shift)

  The adjustment is added to the base, so it survives ``base = 0``: with tool-on over-used,
  ``lambda_on`` is 0 while ``lambda_off`` is positive. That is the behaviour the paper reports
  in section 4.4 for ``lambda_base = 0`` (the policy picks ``<tool_on>``, makes no valid call so
  its tool reward is 0, while a larger ``lambda_off`` is on offer); the multiplicative rule
  cannot produce it.

A balanced batch gives ``base`` for both under either rule. ``ratio_on`` is the batch's share
of tool-on rollouts among those that declared a mode, optionally smoothed across batches
(``ema``). Under several processes (``torch.distributed`` initialised, e.g. TRL under
accelerate), :meth:`AMBController.update` first sums the mode counts over all processes, so
every process sees the whole batch and sets the same pair of coefficients.

Release: by default, when the run's length is known (``total_steps``, which the training
config fills from ``grpo.max_steps``), the last quarter of the steps is released. The paper's
wording is "the last 20 steps" of its 80 iterations, i.e. 25%, and its Table 5 finds removal
at about step 60 of 80 best; ``release_fraction`` changes it, ``release_fraction: null``
never releases (the fixed-ratio row of the component table).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

log = logging.getLogger(__name__)

AMBRule = Literal["multiplicative", "additive"]
PAPER_RELEASE_FRACTION = 0.25
"""The last 20 of the paper's 80 iterations (section 3.3)."""


class AMBConfig(BaseModel):
    """Settings of the controller. Validation rejects combinations that cannot work."""

    base: float = Field(default=1.2, ge=0.0)
    """``lambda_tool^base``: both coefficients start here and return here on release (paper: 1.2)."""
    rule: AMBRule = "multiplicative"
    """How the mode ratio moves the coefficients (see the module docstring)."""
    max_shift: float = Field(default=2.4, ge=0.0)
    """``additive`` rule: the most a coefficient can rise above the base."""
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
    """Length of the run, when known (the training config sets it to ``grpo.max_steps``)."""
    release_last: int | None = Field(default=None, ge=0)
    """Release for the last ``release_last`` of ``total_steps`` steps (paper: 20 of 80)."""
    release_fraction: float | None = Field(default=PAPER_RELEASE_FRACTION, ge=0.0, le=1.0)
    """With ``total_steps`` known and no ``release_step``/``release_last``: release for this
    share of the steps, rounded to whole steps (paper: 20 of 80, 0.25). ``None``: never."""
    distributed: bool = True
    """Sum the mode counts over all ``torch.distributed`` processes before each update."""

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
        if self.release_last is not None and self.total_steps is None:
            raise ValueError("release_last needs total_steps (e.g. 80 and 20)")
        if self.release_step is not None and self.release_last is not None:
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
        if self.total_steps is not None and self.release_fraction is not None:
            return self.total_steps - round(self.total_steps * self.release_fraction)
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
        if c.rule == "additive":
            top = c.base + c.max_shift
            return min(max(c.base - c.gain * d, 0.0), top), min(max(c.base + c.gain * d, 0.0), top), False
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
        """Like :meth:`update` with the counts already made (this process's counts: under
        ``torch.distributed`` they are summed over all processes first)."""
        if min(n_on, n_off, n_none) < 0:
            raise ValueError("mode counts must be non-negative")
        if self.config.distributed:
            n_on, n_off, n_none = all_process_counts(n_on, n_off, n_none)
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


def all_process_counts(n_on: int, n_off: int, n_none: int) -> tuple[int, int, int]:
    """The counts summed over every ``torch.distributed`` process (unchanged when there is one).

    Each trainer process scores only its own slice of the generation batch; summing first makes
    every process compute the ratio of the whole batch, so all hold the same coefficients.
    Every process must call this at the same point (it is a collective operation).
    """
    import sys

    # Never import torch here: only a process that already uses it can be distributed.
    torch = sys.modules.get("torch")
    if torch is None:
        return n_on, n_off, n_none
    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return n_on, n_off, n_none
    backend = dist.get_backend()
    device = torch.device("cuda", torch.cuda.current_device()) if backend == "nccl" else torch.device("cpu")
    counts = torch.tensor([n_on, n_off, n_none], dtype=torch.long, device=device)
    dist.all_reduce(counts, op=dist.ReduceOp.SUM)
    a, b, c = (int(x) for x in counts.tolist())
    return a, b, c

"""A trainer callback that writes every AMB update to ``amb.jsonl`` as training goes."""

from __future__ import annotations

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

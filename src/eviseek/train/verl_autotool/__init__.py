"""AutoTool training on a cluster with verl: reward, zoom tool, reward manager, data rows.

verl loads these by path from its configuration, so nothing here is imported by
``import eviseek``:

* :mod:`.reward` - ``compute_score_batch``, verl's batch custom-reward signature (AMB sees the
  whole batch's mode ratio), and ``compute_score`` for one sample. No verl import.
* :mod:`.manager` - ``AutoToolRewardManager``, a verl reward-loop manager that gathers the
  per-sample calls of verl >= 0.7 back into whole training steps for ``compute_score_batch``
  (the gathering itself is :mod:`.batching`, which imports no verl).
* :mod:`.zoom_tool` - ``ZoomInTool``, the zoom tool for verl's multi-turn tool agent loop
  (``BaseTool``); declared in ``zoom_tool.yaml`` next to this file.
* :mod:`.data` - training rows in the parquet layout verl's multimodal dataset reads.

The example configuration and launch script are in ``examples/verl/``.
"""

from pathlib import Path

TOOL_CONFIG = Path(__file__).with_name("zoom_tool.yaml")
"""The tool-config YAML that declares :class:`~eviseek.train.verl_autotool.zoom_tool.ZoomInTool`."""

__all__ = ["TOOL_CONFIG"]

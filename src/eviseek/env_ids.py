"""The registered id of each built-in environment, one constant each, defined nowhere else.

The env registry (:mod:`eviseek.envs`), the Gymnasium table (:mod:`eviseek._gymnasium`), the
benchmarks (:mod:`eviseek.eval.benchmarks`) and the environments and question generators all
name an environment by these. The module imports nothing, so ``import eviseek`` (which builds
the Gymnasium table) stays light.
"""

TABLETOP = "eviseek/Tabletop-v0"
"""The PyBullet tabletop (:class:`eviseek.envs.tabletop.TabletopEnv`)."""
HOUSE = "eviseek/House-v0"
"""The PyBullet multi-room house (:class:`eviseek.envs.house.HouseEnv`)."""
IMAGE_ZOOM = "eviseek/ImageZoom-v0"
"""Zooming into one high-resolution image (AutoTool's benchmarks)."""
ESIBENCH = "eviseek/ESIBench-v0"
"""The bridge to ESI-Bench's OmniGibson tasks."""
EXPRESS = "eviseek/Express-v0"
"""The bridge to EXPRESS-Bench's Habitat scenes."""

__all__ = ["ESIBENCH", "EXPRESS", "HOUSE", "IMAGE_ZOOM", "TABLETOP"]

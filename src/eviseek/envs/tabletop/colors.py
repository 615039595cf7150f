"""The colours' old home: they moved to :mod:`eviseek.envs.colors`, shared by the tabletop and the
house; the names stay importable from here."""

from eviseek.envs.colors import (
    BOARD_COLORS,
    FLOOR_RGBA,
    LIQUID_RGBA,
    OBJECT_COLORS,
    PALETTE,
    SHADES,
    TABLE_RGBA,
    known_color,
    rgb,
    rgba,
)

__all__ = [
    "BOARD_COLORS",
    "FLOOR_RGBA",
    "LIQUID_RGBA",
    "OBJECT_COLORS",
    "PALETTE",
    "SHADES",
    "TABLE_RGBA",
    "known_color",
    "rgb",
    "rgba",
]

"""Named colours for objects of the simulated environments (tabletop and house).

Each name is a word a vision-language model can be expected to recognise, and the RGB values
are far apart so that two objects of different colours never look alike under the renderer's
lighting. The table and floor use colours outside this palette so that no object blends in.
"""

from __future__ import annotations

PALETTE: dict[str, tuple[float, float, float]] = {
    "red": (0.85, 0.10, 0.10),
    "green": (0.10, 0.65, 0.15),
    "blue": (0.12, 0.25, 0.90),
    "yellow": (0.95, 0.85, 0.10),
    "orange": (0.98, 0.50, 0.05),
    "purple": (0.55, 0.15, 0.75),
    "cyan": (0.10, 0.80, 0.85),
    "pink": (0.98, 0.50, 0.75),
    "brown": (0.45, 0.26, 0.10),
    "white": (0.96, 0.96, 0.96),
    "black": (0.08, 0.08, 0.08),
    "gray": (0.50, 0.50, 0.52),
}
"""Object colours by name (RGB in [0, 1])."""

SHADES: dict[str, tuple[float, float, float]] = {
    "light_gray": PALETTE["white"],
    "dark_gray": PALETTE["gray"],
}
"""Achromatic colours named for how they render, not for their paint. An upright face lit by the
default light from above shows about 55-75% of its paint (measured: paint 0.96 renders 134-184 of
255, paint 0.50 renders 70-99), so boards painted white looked mid-grey and gray ones dark grey
while the text called them white and gray. Kept apart from ``PALETTE`` so palettes built from it
(the house's) do not change."""

BOARD_COLORS: tuple[str, ...] = ("light_gray", "dark_gray", "black")
"""Colours of upright boards and fixtures, each the word for what its face renders as."""

TABLE_RGBA: tuple[float, float, float, float] = (0.80, 0.70, 0.55, 1.0)
"""A light wood tone, not in the palette."""

FLOOR_RGBA: tuple[float, float, float, float] = (0.30, 0.32, 0.36, 1.0)

LIQUID_RGBA: tuple[float, float, float, float] = (0.35, 0.60, 0.95, 0.85)
"""Simulated liquid is drawn as a translucent light-blue slab inside its container."""

OBJECT_COLORS: tuple[str, ...] = tuple(c for c in PALETTE if c not in ("white", "black", "gray"))
"""Colours generators draw task objects from (white, black and gray are kept for occluders)."""


def known_color(color: str) -> bool:
    """Whether ``color`` names a palette colour or a shade."""
    return color in PALETTE or color in SHADES


def rgb(color: str) -> tuple[float, float, float]:
    """The RGB of a named colour or shade; raises ``ValueError`` naming the known ones."""
    if color in PALETTE:
        return PALETTE[color]
    if color in SHADES:
        return SHADES[color]
    raise ValueError(f"unknown colour {color!r}; known colours: {', '.join([*PALETTE, *SHADES])}")


def rgba(color: str, alpha: float = 1.0) -> tuple[float, float, float, float]:
    """The RGBA of a named colour; raises ``ValueError`` naming the palette for an unknown name."""
    r, g, b = rgb(color)
    return (r, g, b, alpha)

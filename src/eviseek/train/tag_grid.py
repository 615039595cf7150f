"""Synthetic "tag grid" questions: a CPU-scale task where some questions need a zoom and some do not.

Each image is a square of noisy background colour cut into a ``grid x grid`` lattice of cells;
every cell holds one small coloured tag. Two kinds of question (ours, designed for the learning
run of ``scripts/autotool_learning_run.py``):

* **need-zoom**: "What colour is the small tag in row B, column 3?" The tag is a few pixels wide
  in the original image. The processor shows the whole image shrunk by ``downscale`` (8x by
  default, so the tag covers about one shown pixel and blends into the noise), while a zoom on
  the cell returns the crop at close to full resolution (the tag covers several pixels of one
  patch). The cell is named in the question, so the right box is learnable from the text.
* **no-need**: "What colour is the background?" Readable from the shrunk whole image; a zoom
  shows it too, but adds a turn (and, under MSPO, risks the -0.5 penalty).
* **majority** (``hurt_share`` of the rows; no-need too): every cell is filled with one of the
  four colours and the question asks "Which colour fills the most cells?". The answer needs the
  whole image, which shows the cells plainly; a zoom on one cell shows only that cell, whose
  colour is the answer in ``k`` of ``grid**2`` cases (``k`` between ``majority_cells``). The
  warm-up's tool-on trace zooms on the top-left cell, as a model that zooms where zooming does
  not help would: a crop that hurts, the tag grid's counterpart of the paper's Figure 1(b). Ours,
  so that a question can pull the mode token towards ``<tool_off>`` (see "A task whose reward can
  teach the split" in docs/autotool_learning_in_depth.md).

Both kinds are answered with a colour name (listed in a fixed order in the question), not an
option letter: a tiny model then maps what it sees straight to a word, without also matching a
shuffled option list. A tag's colour is never the background's. With ``tag_colours: shared``
tags take one of the other three background colours; with ``tag_colours: own`` they come from a
palette of their own (:data:`TAG_COLOURS`), so the two kinds of question never have an answer in
common (why: :attr:`TagGridConfig.tag_colours`).

Rows are :class:`~eviseek.train.data.TrainingRow` (``needs_zoom`` and ``target_boxes`` set:
the named cell for need-zoom rows, the whole image for no-need rows; the warm-up's tool-on
traces zoom into that box. A random cell for no-need rows made the warm-up's boxes look random
to the model, which then wrote the same box for every question).
"""

from __future__ import annotations

import io
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

from eviseek.train.data import TrainingRow

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (205, 45, 45),
    "green": (45, 170, 70),
    "blue": (50, 80, 215),
    "yellow": (225, 200, 40),
}
"""The four background colours, with the RGB the images use (also the tags' with ``tag_colours: shared``)."""

TAG_COLOURS: dict[str, tuple[int, int, int]] = {
    "black": (25, 25, 25),
    "white": (235, 235, 235),
    "purple": (140, 60, 180),
}
"""The tags' own palette (``tag_colours: own``): none of it is a background colour, and each name is a
word of the tiny tokenizer's corpus (:func:`eviseek.train.tiny_model._corpus`)."""

ROW_NAMES = "ABCDEFGH"
"""Rows are named by letter and columns by number (ours): the two then never share a token, so a
tiny model can find each one in the question by what it is, not by where it stands (with both
named by digits, the 1.6M-parameter model of the learning run never learned which digit was
the row; its boxes ignored the question)."""

TagGridKind = Literal["tag", "background", "majority"]

NEED_ZOOM_KIND: TagGridKind = "tag"
NO_NEED_KIND: TagGridKind = "background"
MAJORITY_KIND: TagGridKind = "majority"


class TagGridConfig(BaseModel):
    """Sizes of a tag-grid image (original pixels)."""

    size: int = Field(default=512, ge=64)
    """Side of the square image."""
    grid: int = Field(default=4, ge=2, le=8)
    """Cells per side; a zoom on one cell magnifies by up to ``grid`` times."""
    tag_size: int = Field(default=8, ge=2)
    """Side of each tag; with the defaults about one pixel once the image is shown at 128x128."""
    noise: int = Field(default=40, ge=0, le=120)
    """Amplitude of the per-pixel noise on the background (hides a one-pixel tint)."""
    zoom_share: float = Field(default=0.5, ge=0.0, le=1.0)
    """Share of rows whose question needs zooming."""
    hurt_share: float = Field(default=0.0, ge=0.0, le=1.0)
    """Share of rows that ask for the colour filling the most cells (the ``majority`` kind, where a
    zoom on one cell hurts); taken from the no-need rows, so ``zoom_share + hurt_share <= 1``."""
    majority_cells: tuple[int, int] = (8, 11)
    """Least and most cells of the majority colour in a ``majority`` image (of ``grid**2``)."""
    tag_colours: Literal["shared", "own"] = "shared"
    """Where tags take their colour from: ``shared``, the three background colours other than this
    image's; ``own``, :data:`TAG_COLOURS`. Ours, for the learning run: with ``shared`` a crop of a
    cell looks alike for both kinds of question (noisy background plus one small tag), and the
    answer is its majority colour for one kind and its minority colour for the other. The learning
    run's 1.6M-parameter model learned only the majority rule while both were trained at once
    (docs/autotool_learning_in_depth.md, warm-up probes). With ``own`` the question's answer list alone says
    which palette to read."""

    @model_validator(mode="after")
    def _check(self) -> TagGridConfig:
        if self.zoom_share + self.hurt_share > 1.0 + 1e-9:
            raise ValueError(
                f"zoom_share ({self.zoom_share}) + hurt_share ({self.hurt_share}) exceeds 1; lower one"
            )
        lo, hi = self.majority_cells
        if not 1 <= lo <= hi <= self.grid**2:
            raise ValueError(f"majority_cells must satisfy 1 <= least <= most <= grid**2 ({self.grid**2})")
        if 3 * (lo - 1) < self.grid**2 - lo:
            # Three other colours must be able to hold the remaining cells with fewer than ``lo``
            # each, or no image has a strict majority.
            raise ValueError(
                f"majority_cells least ({lo}) is too small for {self.grid**2} cells: the other three "
                "colours cannot all stay below it; raise it"
            )
        return self


def offered_colours(config: TagGridConfig, needs_zoom: bool) -> list[str]:
    """The colour names a question of this kind offers, in the order the question lists them."""
    if needs_zoom and config.tag_colours == "own":
        return list(TAG_COLOURS)
    return list(COLOURS)


def cell_box(config: TagGridConfig, row: int, col: int) -> list[float]:
    """``[x1, y1, x2, y2]`` of a cell (0-based row and column) in original pixels."""
    side = config.size // config.grid
    return [float(col * side), float(row * side), float((col + 1) * side), float((row + 1) * side)]


def _majority_fill(rng: np.random.Generator, cfg: TagGridConfig) -> tuple[str, list[str]]:
    """The majority colour and each cell's fill (row-major): the majority colour in ``k`` cells
    (``majority_cells``), the others drawn from the remaining colours, each fewer than ``k``."""
    names = list(COLOURS)
    cells = cfg.grid**2
    lo, hi = cfg.majority_cells
    while True:  # seeded, so the same seed always ends on the same draw
        winner = names[int(rng.integers(len(names)))]
        k = int(rng.integers(lo, hi + 1))
        rest = [c for c in names if c != winner]
        fill = [winner] * k + [rest[int(rng.integers(len(rest)))] for _ in range(cells - k)]
        if max(fill.count(c) for c in rest) < k:
            order = rng.permutation(cells)
            return winner, [fill[int(i)] for i in order]


def tag_grid_row(
    seed: int,
    config: TagGridConfig | None = None,
    *,
    needs_zoom: bool | None = None,
    kind: TagGridKind | None = None,
) -> TrainingRow:
    """One tag-grid question, fully determined by ``seed`` (``kind`` or ``needs_zoom`` pin its kind)."""
    from PIL import Image as PILImage

    cfg = config or TagGridConfig()
    rng = np.random.default_rng(seed)
    if kind is None:
        if needs_zoom is None:
            needs_zoom = bool(rng.random() < cfg.zoom_share)
            # Drawn only when majority rows are asked for, so rows of configs without them stay
            # exactly what they were.
            if not needs_zoom and cfg.hurt_share > 0:
                kind = MAJORITY_KIND if rng.random() < cfg.hurt_share / (1 - cfg.zoom_share) else NO_NEED_KIND
        kind = kind or (NEED_ZOOM_KIND if needs_zoom else NO_NEED_KIND)
    needs_zoom = kind == NEED_ZOOM_KIND
    names = list(COLOURS)
    background = names[int(rng.integers(len(names)))]
    palette = TAG_COLOURS if cfg.tag_colours == "own" else COLOURS
    others = [c for c in palette if c != background]
    n, side = cfg.grid, cfg.size // cfg.grid
    base = np.array(COLOURS[background], dtype=np.int16)
    noise = rng.integers(-cfg.noise, cfg.noise + 1, size=(cfg.size, cfg.size, 3), dtype=np.int16)
    majority: str | None = None
    if kind == MAJORITY_KIND:
        majority, fill = _majority_fill(rng, cfg)
        base_map = np.zeros((cfg.size, cfg.size, 3), dtype=np.int16)
        for i, colour in enumerate(fill):
            r, c = divmod(i, n)
            base_map[r * side : (r + 1) * side, c * side : (c + 1) * side] = COLOURS[colour]
        pixels = np.clip(base_map + noise, 0, 255).astype(np.uint8)
        # Tags from the tags' own palette only: a tag in a background colour would change a count.
        palette = TAG_COLOURS
        others = list(TAG_COLOURS)
    else:
        pixels = np.clip(base + noise, 0, 255).astype(np.uint8)
    tags: dict[tuple[int, int], str] = {}
    t = cfg.tag_size
    for r in range(n):
        for c in range(n):
            colour = others[int(rng.integers(len(others)))]
            tags[(r, c)] = colour
            # The tag sits at a seeded spot in the middle half of its cell.
            x = c * side + int(rng.integers(side // 4, 3 * side // 4 - t + 1))
            y = r * side + int(rng.integers(side // 4, 3 * side // 4 - t + 1))
            pixels[y : y + t, x : x + t] = palette[colour]
    if needs_zoom:
        r, c = int(rng.integers(n)), int(rng.integers(n))
        truth = tags[(r, c)]
        head = f"What colour is the small tag in row {ROW_NAMES[r]}, column {c + 1}?"
        box = cell_box(cfg, r, c)
    elif majority is not None:
        truth = majority
        head = "Which colour fills the most cells?"
        box = cell_box(cfg, 0, 0)  # a zoom that hurts: one cell of the whole
    else:
        truth = background
        head = "What colour is the background?"
        box = [0.0, 0.0, float(cfg.size), float(cfg.size)]
    head += f" Answer with one of: {', '.join(offered_colours(cfg, needs_zoom))}."
    buf = io.BytesIO()
    PILImage.fromarray(pixels).save(buf, format="PNG", compress_level=1)
    return TrainingRow(
        id=f"tag-grid-{seed}",
        source="tag_grid",
        question=head,
        images=[buf.getvalue()],
        ground_truth=truth,
        answer_kind="text",
        needs_zoom=needs_zoom,
        target_boxes=[box],
        # The warm-up zooms on exactly the cell: a margin would halve the magnification.
        extra_info={"seed": seed, "kind": kind, "zoom_pad": 0.0},
    )


def tag_grid_rows(n: int, seed: int = 0, config: TagGridConfig | None = None) -> list[TrainingRow]:
    """``n`` rows; row ``i`` uses seed ``seed * 100003 + i``, so different ``seed`` values never overlap
    for ``n`` below 100003 (train and held-out sets use different seeds)."""
    if n < 0:
        raise ValueError("n must be non-negative")
    return [tag_grid_row(seed * 100_003 + i, config) for i in range(n)]

"""Report figures drawn with matplotlib's Agg backend, returned as PNG bytes.

Figures never touch a display and never change the global backend of a caller that already
chose one: they are drawn on a ``Figure`` with an Agg canvas directly.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

# Colours for the four support components, in Figure 2's order: C, GW, P, N.
PART_COLORS = {"C": "#2e7d32", "GW": "#f9a825", "P": "#90caf9", "N": "#bdbdbd"}
_SERIES = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]


def _figure(width: float, height: float):  # type: ignore[no-untyped-def]
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:  # type: ignore[no-untyped-def]
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def accuracy_bars(
    categories: Sequence[str], series: dict[str, Sequence[float | None]], title: str = ""
) -> bytes:
    """Grouped bars: accuracy (%) per category, one bar per system. ``None`` draws no bar."""
    n_sys = max(1, len(series))
    fig = _figure(max(6.0, 0.55 * len(categories) * n_sys + 2.0), 4.2)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / n_sys
    for k, (label, values) in enumerate(series.items()):
        xs = [i + (k - (n_sys - 1) / 2) * width for i in range(len(categories))]
        heights = [v if v is not None else 0.0 for v in values]
        bars = ax.bar(xs, heights, width=width, label=label, color=_SERIES[k % len(_SERIES)])
        for bar, v in zip(bars, values, strict=True):
            if v is None:
                bar.set_alpha(0.0)
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels(categories, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("Accuracy (%)")
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)
    if title:
        ax.set_title(title, pad=28)
    # Above the axes, so that bars reaching 100% are never hidden behind it.
    ax.legend(fontsize=8, frameon=False, ncol=min(4, n_sys), loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return _png(fig)


def support_stacked_bars(rows: dict[str, dict[str, float]], title: str = "") -> bytes:
    """Figure 2: one horizontal bar per system split into C, GW, P and N (% of questions)."""
    labels = list(rows)
    fig = _figure(7.5, 0.5 * len(labels) + 1.4)
    ax = fig.add_subplot(1, 1, 1)
    left = [0.0] * len(labels)
    for part, colour in PART_COLORS.items():
        widths = [max(0.0, rows[label][part]) for label in labels]
        ax.barh(range(len(labels)), widths, left=left, color=colour, label=part, edgecolor="white")
        for i, w in enumerate(widths):
            if w >= 6.0:
                ax.text(left[i] + w / 2, i, f"{w:.1f}", ha="center", va="center", fontsize=7)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("Share of questions (%)")
    if title:
        ax.set_title(title)
    ax.legend(ncol=4, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return _png(fig)


MODE_COLORS = {"tool_on": "#1f77b4", "tool_off": "#ff7f0e"}


def mode_share_bars(bars: dict[str, tuple[float, float]], title: str = "") -> bytes:
    """AutoTool's Figure 3: per benchmark, one bar split into tool-on and tool-off (% of episodes)."""
    labels = list(bars)
    fig = _figure(max(5.0, 0.9 * len(labels) + 2.0), 4.0)
    ax = fig.add_subplot(1, 1, 1)
    bottom = [0.0] * len(labels)
    for k, (mode, colour) in enumerate(MODE_COLORS.items()):
        heights = [bars[label][k] for label in labels]
        ax.bar(range(len(labels)), heights, bottom=bottom, color=colour, label=mode, width=0.6)
        for i, h in enumerate(heights):
            if h >= 8.0:
                ax.text(i, bottom[i] + h / 2, f"{h:.0f}", ha="center", va="center", fontsize=8, color="white")
        bottom = [a + b for a, b in zip(bottom, heights, strict=True)]
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("Share of episodes (%)")
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)
    if title:
        ax.set_title(title, pad=28)
    ax.legend(fontsize=8, frameon=False, ncol=2, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return _png(fig)

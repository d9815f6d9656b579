"""One figure style for every figure: a fixed colour per method, per mechanism and per dataset (the same
meaning in every figure), every plotted accuracy with its 95 % interval, flagged points hollow, and tick
labels with thousands separators.

:func:`accuracy` draws one series; a test reads the drawn figure back (``ax.containers``: each accuracy
series is an errorbar container whose ``series`` attribute names its colour key), so "every accuracy has
its interval and its fixed colour" is checked on the figure objects, not on pixels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.markers import MarkerStyle
from matplotlib.ticker import FuncFormatter
from matplotlib.transforms import offset_copy

# one colour per method, everywhere (compare figures, paper figures, the audit)
METHODS = {
    "FedMD-NFDP": "#1f77b4",
    "FedMD-NP": "#7f7f7f",
    "FedMD-LDP": "#17becf",
    "Centralized": "#000000",
    "LDP-FL": "#ff7f0e",
    "FedAvg": "#8c564b",
    "reverse k-NN": "#2ca02c",
    "PATE": "#9467bd",
    "LDP-DL": "#d62728",
    "DP-SGD": "#bcbd22",
    "DP-FL": "#e377c2",
}
# one colour per mechanism (the figures that compare mechanisms of one method)
MECHANISMS = {
    "pm": "#1b9e77",
    "duchi": "#d95f02",
    "laplacebox": "#7570b3",
    "laplace": "#7570b3",
    "rr": "#e7298a",
    "collision": "#66a61e",
    "gnmax": "#a6761d",
    "none": "#666666",
}
# one colour per dataset (the figures with a line per dataset)
DATASETS = {
    "MNIST": "#4e79a7",
    "Fashion-MNIST": "#f28e2b",
    "CIFAR-10": "#e15759",
    "FEMNIST": "#76b7b2",
    "SVHN": "#59a14f",
}
PALETTES = {"method": METHODS, "mechanism": MECHANISMS, "dataset": DATASETS}
OTHER = "#444444"  # a name no palette knows (a new method): one grey, never a colour that means something else
FLAG_LABEL = "hollow: flagged row (see the page)"


def color(kind: str, name) -> str:
    """The fixed colour of ``name`` (a method, mechanism or dataset: ``kind``)."""
    return PALETTES[kind].get(str(name), OTHER)


def accuracy(ax, rows: pd.DataFrame, x: str, *, series: tuple[str, str], y: str = "accuracy", flagged=None, **line):
    """One accuracy series of ``rows`` (columns ``x``, ``y`` and its 95 % interval ``y_low``, ``y_high``) as
    a line with error bars, in the fixed colour of ``series`` = (kind, name) (kind: method, mechanism or
    dataset); points where ``flagged`` is true are hollow; ``line``: matplotlib's (label, marker,
    linestyle, alpha, capsize, elinewidth).  Returns the errorbar container (``container.series`` = (kind, name))."""
    xs, ys = rows[x].to_numpy(dtype=float), rows[y].to_numpy(dtype=float)
    low, high = rows[f"{y}_low"].to_numpy(dtype=float), rows[f"{y}_high"].to_numpy(dtype=float)
    c = color(*series)
    err = np.nan_to_num(np.vstack([np.clip(ys - low, 0, None), np.clip(high - ys, 0, None)]))
    container = ax.errorbar(
        xs, ys, yerr=err, color=c, **{"capsize": 2, "elinewidth": 0.8, "marker": "o", "linestyle": "-", **line}
    )
    container.series = (series[0], str(series[1]))
    if flagged is not None:
        mask = np.asarray(pd.Series(flagged).fillna(False).astype(bool))
        if mask.any():
            marker = line.get("marker", "o")
            if not MarkerStyle(marker).is_filled():  # an x or a + has no face to leave white
                raise ValueError(f"marker {marker!r} cannot be drawn hollow: flagged points need a filled marker")
            ax.plot(xs[mask], ys[mask], linestyle="none", marker=marker, color=c, markerfacecolor="white", zorder=3)
    return container


def intervals(ax, x, rows: pd.DataFrame, *, series: tuple[str, str]):
    """The 95 % intervals of ``rows`` alone at ``x`` (points drawn otherwise, as the compare figures'
    markers), in the fixed colour of ``series``; a container like :func:`accuracy`'s."""
    y, low, high = (rows[c].to_numpy(dtype=float) for c in ("accuracy", "accuracy_low", "accuracy_high"))
    err = np.nan_to_num(np.vstack([np.clip(y - low, 0, None), np.clip(high - y, 0, None)]))
    container = ax.errorbar(
        np.asarray(x, float), y, yerr=err, fmt="none", color=color(*series), capsize=2, elinewidth=0.8
    )
    container.series = (series[0], str(series[1]))
    return container


def flag_legend(ax, flagged) -> None:
    """A legend entry for hollow markers, where some point is flagged."""
    if pd.Series(flagged).fillna(False).astype(bool).any():
        ax.plot([], [], linestyle="none", marker="o", color=OTHER, markerfacecolor="white", label=FLAG_LABEL)


def thousands(axis) -> None:
    """Tick labels with thousands separators (10,000, not 10000)."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if abs(v) >= 1000 else f"{v:g}"))


def legend_outside(ax, **kw) -> None:
    """The legend right of the axes, never over the data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), **kw)


def legend_below(ax, **kw) -> None:
    """The legend under the axes and its x label (36 points below the axes, whatever their height), never
    over the data: for panels side by side."""
    below = offset_copy(ax.transAxes, fig=ax.figure, y=-36, units="points")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=below, **{"fontsize": 7, **kw})


def covered_points(fig) -> list[tuple[str, float, float]]:
    """The plotted data points (axes title, x, y) that a legend of their own axes covers, after drawing
    ``fig``: what a reader cannot see."""
    fig.canvas.draw()
    covered = []
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or not ax.get_visible():
            continue
        box = legend.get_window_extent()
        for line in ax.lines:
            xy = np.column_stack([line.get_xdata(orig=False), line.get_ydata(orig=False)]).astype(float)
            xy = xy[np.isfinite(xy).all(axis=1)]
            for (x, y), (px, py) in zip(xy, ax.transData.transform(xy) if len(xy) else []):
                if ax.bbox.contains(px, py) and box.contains(px, py):
                    covered.append((ax.get_title(), float(x), float(y)))
    return covered


def min_span(ax, span: float = 0.25) -> None:
    """Widen a zoomed accuracy axis to at least ``span`` (within [0, 1.02]) around its data, so noise of a
    point or two does not read as a trend."""
    low, high = ax.get_ylim()
    if high - low >= span:
        return
    mid = (low + high) / 2
    if mid - span / 2 < 0.0:  # against a bound: the span from it
        low, high = 0.0, span
    elif mid + span / 2 > 1.02:
        low, high = 1.02 - span, 1.02
    else:
        low, high = mid - span / 2, mid + span / 2
    ax.set_ylim(low, high)


def series(ax) -> list[tuple[str, str]]:
    """The (kind, name) of every accuracy series drawn on ``ax`` with :func:`accuracy` (tests)."""
    return [c.series for c in ax.containers if hasattr(c, "series")]

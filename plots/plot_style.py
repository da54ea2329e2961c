"""How every omni-bench figure draws an algorithm and its axes: one colour
and marker per algorithm, the same in every figure; sparse algorithms in
solid lines, dense ones dashed; log axes labelled inside a decade too, and
linear time axes from zero."""

import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

# Known algorithms first, in a fixed order, so that each keeps its colour
# whichever others a figure holds; names not listed follow, in name order.
KNOWN = ["omni", "allgather", "sparcml-split", "sparcml-recdbl", "oktopk", "ps", "ring", "tree", "gloo-ring",
         "gloo-ring-chunked", "gloo-bcube", "gloo-halving-doubling", "nccl", "nccl-tree"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p", "d", "8"]


def algo_style(name, dense):
    """Keyword arguments for ax.plot: colour and marker by name, dashed when dense."""
    colours = plt.get_cmap("tab20").colors
    i = KNOWN.index(name) if name in KNOWN else len(KNOWN) + sum(map(ord, name)) % 6
    return dict(color=colours[(2 * i) % 20 if i < 10 else (2 * i + 1) % 20], marker=MARKERS[i % len(MARKERS)],
                linestyle="--" if dense else "-")


def number_text(v, _pos=None):
    """12,000,000 rather than 1.2e+07: whole numbers of 10,000 and up with
    thousands separators, anything else as short as %g writes it."""
    if abs(v) >= 1e4 and float(v).is_integer():
        return "{:,.0f}".format(v)
    return "%g" % v


def readable_axis(ax, which, log, from_zero=False):
    """Log: ticks at 1, 2 and 5 of each decade, all labelled, so that data
    inside one decade still reads. Linear: from zero when asked (times)."""
    axis = ax.yaxis if which == "y" else ax.xaxis
    if log:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(number_text))
        axis.set_minor_formatter(NullFormatter())
    elif from_zero and which == "y":
        ax.set_ylim(bottom=0)
        axis.set_major_formatter(FuncFormatter(number_text))  # no "1e7" offset above the axis
    elif from_zero:
        ax.set_xlim(left=0)


def labelled_ticks(ax, which):
    """How many ticks of an axis carry a label inside its view (after a draw)."""
    axis = ax.yaxis if which == "y" else ax.xaxis
    low, high = sorted(ax.get_ylim() if which == "y" else ax.get_xlim())
    return sum(1 for t in axis.get_major_ticks() + axis.get_minor_ticks()
               if t.label1.get_visible() and t.label1.get_text() and low <= t.get_loc() <= high)

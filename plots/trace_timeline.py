#!/usr/bin/env python3
"""A timeline picture of one call of an omni-bench trace (docs/profiling.md).

    trace_timeline.py TRACE.json -o PICTURE.png [--algo omni] [--iter N]

TRACE.json is a file written by `omni-bench allreduce --trace`. The picture
shows one call the way Perfetto does: a row per lane of every rank (the
harness's row holds the barrier and the call), spans coloured by kind
(compute, send, recv, wait, backend), and under it the bytes in flight from
each rank. Without --iter the call of median time is drawn.

Needs python3 and matplotlib only. Exit codes follow omni-bench's: 0 ok,
2 bad input, 6 matplotlib missing.
"""

import argparse
import json
import sys

from plot_setup import EXIT_USAGE, load_matplotlib

load_matplotlib("trace_timeline")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)
from matplotlib.patches import Patch  # noqa: E402

COLOURS = {
    "compute": "#d62728",
    "send": "#1f77b4",
    "recv": "#2ca02c",
    "wait": "#bbbbbb",
    "barrier": "#9467bd",
    "backend": "#ff7f0e",
    "call": "#f2f2f2",
}


class InputError(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError("%s: not a readable trace (%s)" % (path, e))
    if not isinstance(doc, dict) or doc.get("otherData", {}).get("tool") != "omni-bench":
        raise InputError("%s: not an omni-bench trace" % path)
    return doc


def pick_call(spans, algo, iteration):
    calls = {}
    for e in spans:
        a = e["args"]
        if a["algo"] == algo and e["cat"] == "call":
            calls.setdefault(a["iter"], []).append(e["dur"])
    if not calls:
        raise InputError("the trace holds no call of '%s'" % algo)
    if iteration is not None:
        if iteration not in calls:
            raise InputError("'%s' has no traced call %d" % (algo, iteration))
        return iteration
    by_time = sorted(calls, key=lambda i: max(calls[i]))
    return by_time[(len(by_time) - 1) // 2]


def draw(doc, algo, iteration, out):
    events = doc["traceEvents"]
    processes, threads = {}, {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "process_name":
            processes[e["pid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    spans = [e for e in events if e["ph"] == "X"]
    it = pick_call(spans, algo, iteration)
    mine = [e for e in spans if e["args"]["algo"] == algo and e["args"]["iter"] == it]
    t0 = min(e["ts"] for e in mine)
    t1 = max(e["ts"] + e["dur"] for e in mine)
    size = mine[0]["args"]["size"]

    # Rows: per rank, the harness first, then the lanes by name.
    rows = sorted({(e["pid"], e["tid"]) for e in mine if e["cat"] != "phase"},
                  key=lambda k: (k[0], threads.get(k, "") != "harness", threads.get(k, "")))
    row_of = {k: i for i, k in enumerate(rows)}

    fig, (ax, flight) = plt.subplots(2, 1, figsize=(13, 0.28 * len(rows) + 3.2), sharex=True,
                                     gridspec_kw={"height_ratios": [0.28 * len(rows) + 0.6, 1.6]})
    for e in sorted(mine, key=lambda e: e["cat"] != "call"):
        if e["cat"] == "phase":
            continue
        y = row_of[(e["pid"], e["tid"])]
        height = 0.8 if e["cat"] != "call" else 0.95
        ax.broken_barh([((e["ts"] - t0) / 1e3, max(e["dur"] / 1e3, 0.02))], (y - height / 2, height),
                       facecolors=COLOURS.get(e["cat"], "#000000"), edgecolor="none")
    labels = ["r%d %s" % (pid, threads.get((pid, tid), "thread %d" % tid)) for pid, tid in rows]
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    for i in range(1, len(rows)):
        if rows[i][0] != rows[i - 1][0]:
            ax.axhline(i - 0.5, color="#444444", linewidth=0.6)
    ax.legend(handles=[Patch(color=c, label=k) for k, c in COLOURS.items()], loc="upper right", fontsize=7,
              ncol=7, framealpha=0.9)
    title = "%s, %s bytes per rank, call %d: one row per lane" % (algo, size, it)
    ax.set_title(title, fontsize=10)

    # Bytes in flight from each rank (summed over its links), in this call's window.
    series = {}
    for e in events:
        if e["ph"] != "C" or not (t0 <= e["ts"] <= t1):
            continue
        series.setdefault((e["pid"], e["name"]), []).append((e["ts"], e["args"]["bytes"]))
    for pid in sorted({p for p, _ in series}):
        changes = []
        for (p, name), points in series.items():
            if p != pid:
                continue
            last = 0
            for ts, value in sorted(points):
                changes.append((ts, value - last))
                last = value
        total, xs, ys = 0, [], []
        for ts, delta in sorted(changes):
            total += delta
            xs.append((ts - t0) / 1e3)
            ys.append(total / 1e6)
        flight.step(xs, ys, where="post", linewidth=0.9, label="from rank %d" % pid)
    flight.set_ylabel("MB in flight", fontsize=8)
    flight.set_xlabel("ms since the first rank entered the barrier before the call", fontsize=8)
    flight.legend(fontsize=7, ncol=4, loc="upper right")
    flight.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


def main(argv):
    p = argparse.ArgumentParser(description="Draw one call of an omni-bench trace.")
    p.add_argument("trace")
    p.add_argument("-o", "--output", required=True, help="picture to write (.png or .svg)")
    p.add_argument("--algo", default="omni")
    p.add_argument("--iter", type=int, default=None, help="the timed call to draw (default: median time)")
    args = p.parse_args(argv)
    try:
        draw(load(args.trace), args.algo, args.iter, args.output)
    except InputError as e:
        sys.stderr.write("trace_timeline: %s\n" % e)
        return EXIT_USAGE
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

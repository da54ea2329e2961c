#!/usr/bin/env python3
"""Figures from omni-bench result files (docs/json-schema.md).

    omni_plot.py RESULTS.json [MORE.json ...] -o DIR

RESULTS.json are result documents of schema 2 or later, which list their
identity fields ("identity_fields") and hold each record's configuration
under "config". `omni-bench plot` converts files of any schema and runs this
script on the converted copy.

Writes PNG and SVG figures into DIR and prints the path of every file it
wrote, one per line:

  time_vs_density      median time per algorithm against density
  speedup_vs_density   time of every other algorithm / time of omni
  time_vs_nodes        median time per algorithm against node count, on a
                       linear axis from zero, each point labelled with its
                       CPU-wait share where measured
  bandwidth_vs_size    bus bandwidth and effective bandwidth against size
  wire_bytes           bytes sent per rank: measured next to analytic
  vs_best_vs_density   the best dense and the best other sparse algorithm's
                       time / omni's (above 1: omni is faster)

Every algorithm keeps its colour and marker in every figure; dense ones are
dashed. With OMNIB_PLOT_MIN_TICKS=N set, an axis with fewer than N labelled
ticks is an error (exit 1, naming the figure).

Only the figures the data supports are drawn (a sweep needs two or more
values), one per fixed configuration; a file name carries the configuration
fields that tell its figure apart from the others of its kind. Skipped
records are ignored; records with wrong results are drawn and flagged.

Needs python3 and matplotlib only. Exit codes follow omni-bench's: 0 ok,
2 bad input, 6 matplotlib missing.
"""

import argparse
import json
import os
import re
import sys
import textwrap

from plot_setup import EXIT_USAGE, load_matplotlib

load_matplotlib("omni_plot")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullFormatter  # noqa: E402
from plot_style import algo_style, labelled_ticks, readable_axis  # noqa: E402

# Fields that identify a configuration: read from the files ("identity_fields",
# written from the one list in tools/config/run_config.cc) by load_records().
CONFIG_FIELDS = []
# Their defaults ("identity_defaults"): titles leave out fields at their default.
CONFIG_DEFAULTS = {}
REFERENCE_ALGO = "omni"
WRONG_STYLE = dict(marker="x", color="red", markersize=11, markeredgewidth=2.2, linestyle="none", zorder=5)
# Past this CPU-wait share a row measured the host (kHostBoundWaitShare in
# tools/record/result_record.h): such points' labels are bold.
HOST_BOUND_WAIT_SHARE = 0.10


class InputError(Exception):
    pass


def human_bytes(n):
    n = float(n)
    for unit in ["B", "KiB", "MiB", "GiB", "TiB"]:
        if abs(n) < 1024 or unit == "TiB":
            return ("%d %s" % (n, unit)) if n == int(n) else ("%.3g %s" % (n, unit))
        n /= 1024.0
    return "%g B" % n


def rate_text(bps):
    for unit, scale in (("tbit", 1e12), ("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3)):
        if bps >= scale:
            return "%g%s" % (bps / scale, unit)
    return "%gbit" % bps


def field_text(key, value):
    if key == "size_bytes":
        return "size=" + human_bytes(value)
    if key == "link_rate_bps":
        return "link=" + rate_text(value) if value else "link=none"
    if key == "link_delay_ns":
        return "delay=%gus" % (value / 1e3)
    if key == "block_size":
        return "block=%s" % value
    if key == "inplace":
        return "in-place" if value else "out-of-place"
    if key in ("dtype", "device", "collective"):
        return str(value)
    return "%s=%s" % (key, value)


def load_records(paths):
    """Returns the usable records of every file, later files winning ties.
    Each record is flattened: its "config" fields sit beside its outcome."""
    global CONFIG_FIELDS, CONFIG_DEFAULTS
    by_key = {}
    identity = None
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
        except FileNotFoundError:
            raise InputError("%s: no such file" % path)
        except (OSError, ValueError) as e:
            raise InputError("%s: not a readable JSON result file (%s)" % (path, e))
        if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
            raise InputError("%s: has no \"results\" list: is it an omni-bench -J file?" % path)
        fields = doc.get("identity_fields")
        if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
            raise InputError("%s: has no \"identity_fields\" list (schema %s): plot it with `omni-bench plot`, "
                             "which reads every schema" % (path, doc.get("schema_version")))
        if identity is not None and fields != identity:
            raise InputError("%s: its identity fields differ from the other files': write them with one "
                             "omni-bench build, or plot them separately" % path)
        identity = fields
        defaults = doc.get("identity_defaults")
        if isinstance(defaults, dict):
            CONFIG_DEFAULTS = defaults
        for rec in doc["results"]:
            if not isinstance(rec, dict) or rec.get("skipped") or "algo" not in rec:
                continue
            if not isinstance(rec.get("config"), dict):
                continue
            if not isinstance(rec.get("time_us"), dict) or rec["time_us"].get("median") is None:
                continue
            flat = dict(rec)
            flat.update(rec["config"])
            key = tuple([flat.get(k) for k in identity] + [flat["algo"]])
            by_key[key] = flat
    CONFIG_FIELDS = identity or []
    return list(by_key.values())


def topology_family(rec):
    """A simulated platform sized to its node count ("fat-tree:2;32,8;1,32;1,1"
    at 256 nodes) differs at every node count; the time-vs-nodes figure
    puts them on one line by their family ("fat-tree")."""
    topology = rec.get("topology")
    if isinstance(topology, str) and ":" in topology:
        return dict(rec, topology=topology.split(":", 1)[0])
    return rec


def one_aggregator_per_worker(records):
    """Records for the time-vs-nodes figure. A sweep with one dedicated
    aggregator per worker (`--aggregators nodes`) changes both counts
    together; those records get aggregators="one per worker" so that they
    form one series, like a fixed count or colocated shards do. Simulated
    platforms go by their topology's family (topology_family)."""
    records = [topology_family(r) for r in records]
    fields = [k for k in CONFIG_FIELDS if k not in ("nodes", "aggregators")]
    groups = {}
    for rec in records:
        groups.setdefault(tuple(rec.get(k) for k in fields), []).append(rec)
    out = []
    for recs in groups.values():
        matched = [r for r in recs if r.get("aggregators") and r["aggregators"] == r.get("nodes")]
        relabel = len({r["nodes"] for r in matched}) >= 2
        for r in recs:
            if relabel and r.get("aggregators") and r["aggregators"] == r.get("nodes"):
                r = dict(r, aggregators="one per worker")
            out.append(r)
    return out


def group_by(records, varying):
    """Groups records by every configuration field except `varying` (and algo)."""
    fixed_fields = [k for k in CONFIG_FIELDS if k not in varying]
    groups = {}
    for rec in records:
        groups.setdefault(tuple(rec.get(k) for k in fixed_fields), []).append(rec)
    return fixed_fields, groups


def distinguishing_fields(fixed_fields, group_keys):
    """The fixed fields whose values differ between groups (for file names)."""
    out = []
    for i, k in enumerate(fixed_fields):
        if len({key[i] for key in group_keys}) > 1:
            out.append(i)
    return out


def slug(text):
    return re.sub(r"[^A-Za-z0-9.=+-]+", "_", text).strip("_")


def title_of(kind, fixed_fields, key, width=78):
    parts = [field_text(k, v) for k, v in zip(fixed_fields, key)
             if v is not None and (k not in CONFIG_DEFAULTS or CONFIG_DEFAULTS[k] != v)]
    return kind + "\n" + "\n".join(textwrap.wrap(", ".join(parts), width))


def algos_in(records):
    names = sorted({r["algo"] for r in records})
    # The engine first, so it keeps the first colour in every figure.
    return sorted(names, key=lambda a: (a != REFERENCE_ALGO, a))


def styles_of(recs):
    """algo -> its line style (dense algorithms dashed)."""
    return {r["algo"]: algo_style(r["algo"], bool(r.get("dense", False))) for r in recs}


def spans_decade(values):
    positive = [v for v in values if v > 0]
    return len(positive) == len(values) and positive and max(positive) / min(positive) >= 10


def size_formatter():
    return FuncFormatter(lambda v, _pos: human_bytes(v) if v > 0 else "0")


class FigureWriter:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.written = []
        self.min_ticks = int(os.environ.get("OMNIB_PLOT_MIN_TICKS", "0"))
        self.too_few_ticks = []

    def check_ticks(self, fig, name):
        if self.min_ticks <= 0:
            return
        fig.canvas.draw()
        for i, ax in enumerate(fig.axes):
            for which in ("x", "y"):
                if getattr(ax, "omnib_categorical", None) == which:
                    continue
                n = labelled_ticks(ax, which)
                if n < self.min_ticks:
                    self.too_few_ticks.append("%s: panel %d, %s axis: %d labelled ticks" % (name, i + 1, which, n))

    def save(self, fig, name):
        os.makedirs(self.out_dir, exist_ok=True)
        self.check_ticks(fig, name)
        for ext in ("png", "svg"):
            path = os.path.join(self.out_dir, "%s.%s" % (name, ext))
            if ext == "svg":
                fig.savefig(path, format="svg", metadata={"Date": None})
            else:
                fig.savefig(path, format="png", dpi=120)
            self.written.append(path)
            print(path)
        plt.close(fig)


def flag_wrong(ax, xs_ys, labelled):
    """Red crosses over points whose results were wrong; returns whether any were drawn."""
    if not xs_ys:
        return labelled
    xs, ys = zip(*xs_ys)
    ax.plot(xs, ys, label=None if labelled else "wrong result", **WRONG_STYLE)
    return True


def time_errors(recs):
    """Whiskers from the fastest iteration to the 95th percentile."""
    lower, upper = [], []
    for r in recs:
        t = r["time_us"]
        med = t["median"]
        lower.append(max(0.0, med - t.get("min", med)))
        upper.append(max(0.0, t.get("p95", med) - med))
    return [lower, upper]


def wait_share(rec):
    """The slowest rank's CPU-wait share of its call, or None where not measured."""
    cpu = rec.get("cpu")
    share = cpu.get("wait_share_max") if isinstance(cpu, dict) else None
    return share if isinstance(share, (int, float)) else None


def label_wait_shares(ax, pts, xs, ys, color):
    """Writes each point's CPU-wait share beside it: where it is high, the
    host's scheduling, not the network, set that point's time."""
    labelled = False
    for x, y, r in zip(xs, ys, pts):
        share = wait_share(r)
        if share is None:
            continue
        ax.annotate("%.0f%%" % (100 * share), (x, y), textcoords="offset points", xytext=(6, 4), fontsize=8,
                    color=color, fontweight="bold" if share > HOST_BOUND_WAIT_SHARE else "normal")
        labelled = True
    return labelled


def plot_sweep(writer, records, varying, axis_field, kind, name, xlabel, log_x_default=None, size_axis=False,
               wait_shares=False):
    """One time-vs-`axis_field` figure per fixed configuration; with
    `wait_shares`, each point labelled with its CPU-wait share."""
    fixed_fields, groups = group_by(records, varying)
    keys = [k for k, g in groups.items() if len({r[axis_field] for r in g}) >= 2]
    differ = distinguishing_fields(fixed_fields, keys)
    for key in keys:
        recs = groups[key]
        names = algos_in(recs)
        styles = styles_of(recs)
        fig, ax = plt.subplots(figsize=(7.5, 5))
        any_wrong = False
        any_wait = False
        limit_labelled = False
        for algo in names:
            pts = sorted((r for r in recs if r["algo"] == algo), key=lambda r: r[axis_field])
            xs = [r[axis_field] for r in pts]
            ys = [r["time_us"]["median"] for r in pts]
            ax.errorbar(xs, ys, yerr=time_errors(pts), capsize=3, label=algo, **styles[algo])
            if wait_shares:
                any_wait |= label_wait_shares(ax, pts, xs, ys, styles[algo]["color"])
            limits = [(r[axis_field], r["link_limit"]["limit_us"]) for r in pts if r.get("link_limit")]
            if limits:
                ax.plot(*zip(*limits), color=styles[algo]["color"], linestyle=":", linewidth=1,
                        label=None if limit_labelled else "link limit (dotted, per algorithm)")
                limit_labelled = True
            any_wrong = flag_wrong(ax, [(r[axis_field], r["time_us"]["median"]) for r in pts
                                        if r.get("correct") is False], any_wrong)
        xs_all = [r[axis_field] for r in recs]
        # Simulated node counts reach 1024: past a 16-fold span, powers of
        # two on a log axis, and times (which then span decades) on one too.
        wide_nodes = axis_field == "nodes" and max(xs_all) >= 16 * min(xs_all)
        if wide_nodes:
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_locator(FixedLocator(sorted(set(xs_all))))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "%d" % v))
            ax.xaxis.set_minor_formatter(NullFormatter())
        elif log_x_default is True or (log_x_default is None and spans_decade(xs_all)):
            ax.set_xscale("log", base=2 if size_axis else 10)
        if size_axis:
            ax.xaxis.set_major_formatter(size_formatter())
        elif ax.get_xscale() == "log":
            readable_axis(ax, "x", log=True)
        if axis_field == "nodes" and not wide_nodes:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        # Against node count the question is whether time grows: a linear
        # axis from zero shows that for every series, however far apart,
        # unless the nodes span so much that times span decades.
        log_time = (axis_field != "nodes" or wide_nodes) and spans_decade([r["time_us"]["median"] for r in recs])
        if log_time:
            ax.set_yscale("log")
        readable_axis(ax, "y", log=log_time, from_zero=True)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("median time per allreduce (µs)\nwhiskers: min to p95")
        notes = (" (wrong results flagged)" if any_wrong else "") + \
            (" (%%: CPU wait of the slowest rank, bold above %.0f%%)" % (100 * HOST_BOUND_WAIT_SHARE) if any_wait else "")
        ax.set_title(title_of(kind + notes, fixed_fields, key), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=9)
        fig.tight_layout()
        writer.save(fig, file_name(name, fixed_fields, key, differ))
    return keys, fixed_fields, groups, differ


def file_name(name, fixed_fields, key, differ):
    if not differ:
        return name
    return name + "__" + slug("_".join(field_text(fixed_fields[i], key[i]) for i in differ))


def plot_speedup(writer, keys, fixed_fields, groups, differ):
    for key in keys:
        recs = groups[key]
        ref = {r["density"]: r for r in recs if r["algo"] == REFERENCE_ALGO}
        others = [a for a in algos_in(recs) if a != REFERENCE_ALGO]
        if len(ref) < 2 or not others:
            continue
        styles = styles_of(recs)
        fig, ax = plt.subplots(figsize=(7.5, 5))
        all_speedups = []
        any_wrong = False
        for algo in others:
            pts = sorted((r for r in recs if r["algo"] == algo and r["density"] in ref), key=lambda r: r["density"])
            pairs = [(r["density"], r["time_us"]["median"] / ref[r["density"]]["time_us"]["median"], r)
                     for r in pts if ref[r["density"]]["time_us"]["median"] > 0]
            if not pairs:
                continue
            ax.plot([p[0] for p in pairs], [p[1] for p in pairs], label="%s / %s" % (algo, REFERENCE_ALGO),
                    **styles[algo])
            all_speedups += [p[1] for p in pairs]
            any_wrong = flag_wrong(ax, [(d, s) for d, s, r in pairs
                                        if r.get("correct") is False or ref[d].get("correct") is False], any_wrong)
        if not all_speedups:
            plt.close(fig)
            continue
        ax.axhline(1.0, color="grey", linestyle="--", linewidth=1, label="break-even")
        if spans_decade(list(ref.keys())):
            ax.set_xscale("log")
            readable_axis(ax, "x", log=True)
        log_y = spans_decade(all_speedups + [1.0])
        if log_y:
            ax.set_yscale("log")
        readable_axis(ax, "y", log=log_y, from_zero=True)
        ax.set_xlabel("density (fraction of non-zero elements per rank)")
        ax.set_ylabel("speedup of %s (other time / %s time, ×)" % (REFERENCE_ALGO, REFERENCE_ALGO))
        ax.set_title(title_of("Speedup of %s vs density" % REFERENCE_ALGO +
                              (" (wrong results flagged)" if any_wrong else ""), fixed_fields, key), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=9)
        fig.tight_layout()
        writer.save(fig, file_name("speedup_vs_density", fixed_fields, key, differ))


def plot_bandwidth(writer, records):
    fixed_fields, groups = group_by(records, ["size_bytes"])
    keys = [k for k, g in groups.items() if len({r["size_bytes"] for r in g}) >= 2]
    differ = distinguishing_fields(fixed_fields, keys)
    for key in keys:
        recs = groups[key]
        names = algos_in(recs)
        styles = styles_of(recs)
        fig, (bus, eff) = plt.subplots(1, 2, figsize=(12, 5))
        any_wrong = False
        for ax, field, label in ((bus, "busbw_GBps", "bus bandwidth (GB/s, dense convention)"),
                                 (eff, "algbw_GBps", "effective bandwidth: size / time (GB/s)")):
            labelled = False  # one "wrong result" legend entry per panel
            for algo in names:
                pts = sorted((r for r in recs if r["algo"] == algo), key=lambda r: r["size_bytes"])
                ax.plot([r["size_bytes"] for r in pts], [r.get(field, 0) for r in pts], label=algo,
                        **styles[algo])
                labelled = flag_wrong(ax, [(r["size_bytes"], r.get(field, 0)) for r in pts
                                           if r.get("correct") is False], labelled)
            any_wrong = any_wrong or labelled
            log_bw = spans_decade([r.get(field, 0) for r in recs])
            if log_bw:
                ax.set_yscale("log")
            readable_axis(ax, "y", log=log_bw, from_zero=True)
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(size_formatter())
            ax.set_xlabel("tensor size per rank")
            ax.set_ylabel(label)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=9)
        fig.suptitle(title_of("Bandwidth vs size" + (" (wrong results flagged)" if any_wrong else ""),
                              fixed_fields, key), fontsize=10)
        fig.tight_layout()
        writer.save(fig, file_name("bandwidth_vs_size", fixed_fields, key, differ))


def wire(rec, kind):
    block = rec.get(kind) or {}
    v = block.get("sent_per_rank_max")
    return None if v is None else float(v)


def plot_wire_bytes(writer, records):
    """Wire bytes against density where densities were swept, else bars per configuration."""
    fixed_fields, groups = group_by(records, ["density"])
    swept = {k for k, g in groups.items() if len({r["density"] for r in g}) >= 2}
    differ = distinguishing_fields(fixed_fields, list(swept))
    for key in [k for k in groups if k in swept]:
        recs = groups[key]
        names = algos_in(recs)
        styles = styles_of(recs)
        fig, ax = plt.subplots(figsize=(7.5, 5))
        values = []
        any_wrong = False
        for algo in names:
            pts = sorted((r for r in recs if r["algo"] == algo), key=lambda r: r["density"])
            measured = [(r["density"], wire(r, "wire_bytes")) for r in pts if wire(r, "wire_bytes") is not None]
            analytic = [(r["density"], wire(r, "analytic_bytes")) for r in pts
                        if wire(r, "analytic_bytes") is not None]
            if measured:
                ax.plot(*zip(*measured), marker=styles[algo]["marker"], color=styles[algo]["color"],
                        label="%s measured" % algo)
            if analytic:
                ax.plot(*zip(*analytic), linestyle=":", color=styles[algo]["color"], label="%s analytic" % algo)
            values += [v for _, v in measured + analytic]
            any_wrong = flag_wrong(ax, [(r["density"], wire(r, "wire_bytes")) for r in pts
                                        if r.get("correct") is False and wire(r, "wire_bytes") is not None],
                                   any_wrong)
        if spans_decade([r["density"] for r in recs]):
            ax.set_xscale("log")
            readable_axis(ax, "x", log=True)
        if spans_decade(values):
            ax.set_yscale("log", base=2)  # ticks at binary sizes
        ax.yaxis.set_major_formatter(size_formatter())
        ax.set_xlabel("density (fraction of non-zero elements per rank)")
        ax.set_ylabel("bytes sent per iteration by the busiest rank")
        ax.set_title(title_of("Bytes on the wire per rank vs density" +
                              (" (wrong results flagged)" if any_wrong else ""), fixed_fields, key), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, ncol=2)
        fig.tight_layout()
        writer.save(fig, file_name("wire_bytes_vs_density", fixed_fields, key, differ))

    # Configurations without a density sweep: measured and analytic bars.
    single = [r for k, g in groups.items() if k not in swept for r in g]
    all_fields, configs = group_by(single, [])
    differ = distinguishing_fields(all_fields, list(configs))
    for key, recs in configs.items():
        names = algos_in(recs)
        fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(names) + 2), 5))
        xs = range(len(names))
        width = 0.38
        measured = [wire(next(r for r in recs if r["algo"] == a), "wire_bytes") for a in names]
        analytic = [wire(next(r for r in recs if r["algo"] == a), "analytic_bytes") for a in names]
        ax.bar([x - width / 2 for x in xs], [m or 0 for m in measured], width, label="measured")
        ax.bar([x + width / 2 for x in xs], [a or 0 for a in analytic], width, label="analytic", alpha=0.6)
        for x, m in zip(xs, measured):
            if m is None:
                ax.annotate("not counted", (x - width / 2, 0), ha="center", va="bottom", fontsize=8, rotation=90)
        wrong = [(x - width / 2, m or 0) for x, a, m in zip(xs, names, measured)
                 if next(r for r in recs if r["algo"] == a).get("correct") is False]
        any_wrong = flag_wrong(ax, wrong, False)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(names, rotation=20)
        ax.omnib_categorical = "x"  # one tick per algorithm: not a scale to read
        ax.yaxis.set_major_formatter(size_formatter())
        ax.set_ylabel("bytes sent per iteration by the busiest rank")
        ax.set_title(title_of("Bytes on the wire per rank" + (" (wrong results flagged)" if any_wrong else ""),
                              all_fields, key), fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=9)
        fig.tight_layout()
        writer.save(fig, file_name("wire_bytes", all_fields, key, differ))


def plot_vs_best(writer, keys, fixed_fields, groups, differ):
    """Per density sweep: the best dense and the best other sparse algorithm's
    time over omni's, density by density (above 1: omni is faster)."""
    for key in keys:
        recs = groups[key]
        by_density = {}
        for r in recs:
            by_density.setdefault(r["density"], []).append(r)
        series = {"vs best dense": [], "vs best sparse": []}
        for density, rs in sorted(by_density.items()):
            ref = next((r for r in rs if r["algo"] == REFERENCE_ALGO), None)
            if not ref or ref["time_us"]["median"] <= 0:
                continue
            dense = [r["time_us"]["median"] for r in rs if r.get("dense")]
            sparse = [r["time_us"]["median"] for r in rs if not r.get("dense") and r["algo"] != REFERENCE_ALGO]
            if dense:
                series["vs best dense"].append((density, min(dense) / ref["time_us"]["median"]))
            if sparse:
                series["vs best sparse"].append((density, min(sparse) / ref["time_us"]["median"]))
        if sum(len(v) for v in series.values()) < 2:
            continue
        fig, ax = plt.subplots(figsize=(7.5, 5))
        for (label, pts), dense in zip(series.items(), (True, False)):
            if pts:
                style = algo_style("ring" if dense else "allgather", dense)
                ax.plot(*zip(*pts), label="%s %s" % (REFERENCE_ALGO, label), **style)
        ax.axhline(1.0, color="grey", linestyle="--", linewidth=1, label="break-even")
        if spans_decade(list(by_density)):
            ax.set_xscale("log")
            readable_axis(ax, "x", log=True)
        readable_axis(ax, "y", log=False, from_zero=True)
        ax.set_xlabel("density (fraction of non-zero elements per rank)")
        ax.set_ylabel("best other algorithm's time / %s's (×; above 1: %s faster)" % (REFERENCE_ALGO, REFERENCE_ALGO))
        ax.set_title(title_of("%s against the best dense and sparse algorithms" % REFERENCE_ALGO, fixed_fields, key),
                     fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=9)
        fig.tight_layout()
        writer.save(fig, file_name("vs_best_vs_density", fixed_fields, key, differ))


def main(argv):
    parser = argparse.ArgumentParser(description="Figures from omni-bench result JSON files.")
    parser.add_argument("results", nargs="+", help="result files written by omni-bench allreduce -J")
    parser.add_argument("-o", "--output", required=True, help="folder for the PNG and SVG files")
    args = parser.parse_args(argv)

    try:
        records = load_records(args.results)
    except InputError as e:
        sys.stderr.write("omni_plot: %s\n" % e)
        return EXIT_USAGE
    if not records:
        sys.stderr.write("omni_plot: nothing to plot: the files hold no measured (non-skipped) records\n")
        return EXIT_USAGE
    plt.rcParams["svg.hashsalt"] = "omni-bench"  # stable SVG ids run to run
    plt.rcParams["svg.fonttype"] = "none"  # text stays text: searchable and editable
    writer = FigureWriter(args.output)
    keys, fixed_fields, groups, differ = plot_sweep(
        writer, records, ["density"], "density", "Time vs density", "time_vs_density",
        "density (fraction of non-zero elements per rank)")
    plot_speedup(writer, keys, fixed_fields, groups, differ)
    plot_vs_best(writer, keys, fixed_fields, groups, differ)
    plot_sweep(writer, one_aggregator_per_worker(records), ["nodes"], "nodes", "Time vs node count", "time_vs_nodes",
               "worker nodes",
               log_x_default=False, wait_shares=True)
    plot_bandwidth(writer, records)
    plot_wire_bytes(writer, records)
    if writer.too_few_ticks:
        for problem in writer.too_few_ticks:
            sys.stderr.write("omni_plot: fewer than %d labelled ticks: %s\n" % (writer.min_ticks, problem))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

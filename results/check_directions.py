#!/usr/bin/env python3
"""Checks that two runs of a study agree on every speedup's direction.

    check_directions.py FIRST.json SECOND.json [--subject omni] [--tie 0.05]

For every configuration and every other algorithm, the subject's speedup is
the other's median time over the subject's. A study made with --repeat R
holds R whole runs per point (each run launches the ranks afresh and times
every algorithm), so each point also has R per-run speedups. A study claims a
direction only where all of them agree:

  faster  every run's speedup is above 1 + tie
  slower  every run's speedup is below 1 - tie
  tie     otherwise: the runs disagree, or the algorithms are within the band

(a study of one run per point has one speedup: its median's). Two algorithms
that move the same bytes through the same links, or that are both bound by
latency and this machine's CPU, differ by noise, and noise has no direction.

The check fails (exit 1) when a point is faster in one study and slower in
the other, or claims a direction in one while the other's median speedup
lies beyond the band on the opposite side. Prints every point and a tally.
Exit 2 on unreadable input.
"""
import argparse
import json
import sys


def points(path, subject):
    """{(config key, algo): (median speedup, [per-run speedups])}"""
    with open(path) as f:
        doc = json.load(f)
    by_config = {}
    for rec in doc["results"]:
        if rec.get("skipped"):
            continue
        key = json.dumps(rec["config"], sort_keys=True)
        by_config.setdefault(key, {})[rec["algo"]] = rec
    out = {}
    for key, recs in by_config.items():
        if subject not in recs:
            continue
        mine = recs[subject]
        if mine["time_us"]["median"] <= 0:
            continue
        my_runs = [r["median_us"] for r in mine.get("runs", [])]
        for algo, rec in recs.items():
            if algo == subject:
                continue
            median = rec["time_us"]["median"] / mine["time_us"]["median"]
            runs = [r["median_us"] for r in rec.get("runs", [])]
            per_run = [o / m for o, m in zip(runs, my_runs) if m > 0]
            if len(per_run) != len(my_runs) or not per_run:
                per_run = [median]
            out[(key, algo)] = (median, per_run)
    return out


def direction(per_run, band):
    if all(s > 1 + band for s in per_run):
        return "faster"
    if all(s < 1 - band for s in per_run):
        return "slower"
    return "tie"


def opposite(claimed, median, band):
    if claimed == "faster":
        return median < 1 - band
    if claimed == "slower":
        return median > 1 + band
    return False


def label(key):
    c = json.loads(key)
    return "nodes %d density %g block %d %s %s" % (c["nodes"], c["density"], c["block_size"],
                                                  c.get("workload", "blocks"), c.get("dtype", "float"))


def spread(per_run):
    return "%.2f-%.2f" % (min(per_run), max(per_run))


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("first")
    p.add_argument("second")
    p.add_argument("--subject", default="omni")
    p.add_argument("--tie", type=float, default=0.05)
    a = p.parse_args(argv)
    try:
        one, two = points(a.first, a.subject), points(a.second, a.subject)
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.stderr.write("check_directions: %s\n" % e)
        return 2
    flips = same = ties = 0
    print("%-40s %-18s %9s %11s %9s %11s  %s" %
          ("configuration", "vs", "first", "(runs)", "second", "(runs)", "direction"))
    for point in sorted(one):
        if point not in two:
            continue
        (m1, r1), (m2, r2) = one[point], two[point]
        d1, d2 = direction(r1, a.tie), direction(r2, a.tie)
        bad = (d1 != "tie" and d2 != "tie" and d1 != d2) or opposite(d1, m2, a.tie) or opposite(d2, m1, a.tie)
        flips += bad
        same += not bad and d1 == d2 and d1 != "tie"
        ties += not bad and "tie" in (d1, d2)
        print("%-40s %-18s %8.2fx %11s %8.2fx %11s  %s%s" %
              (label(point[0]), point[1], m1, spread(r1), m2, spread(r2),
               d1 if d1 == d2 else d1 + " / " + d2, "  FLIPPED" if bad else ""))
    print("# %d points: %d with the same direction in both, %d a tie in one or both (runs disagree or "
          "within +-%g%%), %d with a direction that did not reproduce" %
          (len(one), same, ties, a.tie * 100, flips))
    return 1 if flips else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

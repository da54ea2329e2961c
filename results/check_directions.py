#!/usr/bin/env python3
"""Checks that two runs of a study agree on every speedup's direction.

    check_directions.py FIRST.json SECOND.json [--subject omni] [--tie 0.05]

For every configuration and every other algorithm, the subject's speedup
(other's median / subject's median) is "faster" above 1 + tie, "slower"
below 1 - tie, and a "tie" in between: two algorithms that move the same
bytes through the same links differ by noise, and a tie has no direction.
The check fails (exit 1) when a point is faster in one run and slower in the
other, or a tie in one and a clear direction beyond twice the band in the
other. Prints every point. Exit 2 on unreadable input.
"""
import argparse
import json
import sys


def speedups(path, subject):
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
        mine = recs[subject]["time_us"]["median"]
        for algo, rec in recs.items():
            if algo != subject and mine > 0:
                out[(key, algo)] = rec["time_us"]["median"] / mine
    return out


def direction(s, band):
    if s > 1 + band:
        return "faster"
    if s < 1 - band:
        return "slower"
    return "tie"


def label(key):
    c = json.loads(key)
    return "nodes %d density %g block %d %s %s" % (c["nodes"], c["density"], c["block_size"],
                                                  c.get("workload", "blocks"), c.get("dtype", "float"))


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("first")
    p.add_argument("second")
    p.add_argument("--subject", default="omni")
    p.add_argument("--tie", type=float, default=0.05)
    a = p.parse_args(argv)
    try:
        one, two = speedups(a.first, a.subject), speedups(a.second, a.subject)
    except (OSError, ValueError, KeyError) as e:
        sys.stderr.write("check_directions: %s\n" % e)
        return 2
    flips = 0
    print("%-40s %-14s %9s %9s  %s" % ("configuration", "vs", "first", "second", "direction"))
    for point in sorted(one):
        if point not in two:
            continue
        s1, s2 = one[point], two[point]
        d1, d2 = direction(s1, a.tie), direction(s2, a.tie)
        bad = (d1 != "tie" and d2 != "tie" and d1 != d2) or \
              (d1 == "tie" and direction(s2, 2 * a.tie) != "tie") or \
              (d2 == "tie" and direction(s1, 2 * a.tie) != "tie")
        flips += bad
        print("%-40s %-14s %8.2fx %8.2fx  %s%s" % (label(point[0]), point[1], s1, s2,
                                                   d1 if d1 == d2 else d1 + " / " + d2, "  FLIPPED" if bad else ""))
    print("# %d points, %d with a direction that did not reproduce (tie band +-%g%%)" %
          (len(one), flips, a.tie * 100))
    return 1 if flips else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

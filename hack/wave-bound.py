#!/usr/bin/env python3
"""wave-bound.py - the least mean JCT a rigid gang trace allows at its
shortest makespan, for traces like knavigator_gang53: every job submitted
at once, every job the same duration, pods of one shape.

Usage: wave-bound.py TRACE SLOTS

TRACE has the columns replicas (pods of the gang) and duration_s; SLOTS is
how many of those pods the cluster holds at once (gang53: 32 nodes of one
8-GPU pod each). With equal durations D, a schedule is a sequence of
waves; the shortest makespan is ceil(pods / SLOTS) waves, reached only
when the waves tile the cluster. Among the ways to split the jobs into
that many waves of at most SLOTS pods, the one that puts the most jobs in
the earliest waves gives the least mean JCT, sum(wave i * D * jobs in it) /
jobs. The search is exhaustive over the multisets of gang sizes, with one
shortcut: it keeps, for each remainder, the split whose sorted job counts
score best, so the figure is a feasible schedule's (an upper bound on the
optimum at that makespan, and a lower one on any policy's worth trying).
It prints the waves' job counts, that mean JCT, and the mean of packing
the smallest gangs first with no makespan kept.
"""
import csv
import functools
import math
import sys
from collections import Counter


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: wave-bound.py TRACE SLOTS")
    rows = list(csv.DictReader(open(sys.argv[1])))
    slots = int(sys.argv[2])
    sizes = [int(r["replicas"]) for r in rows]
    durations = {float(r["duration_s"]) for r in rows}
    if len(durations) != 1:
        sys.exit(f"wave-bound.py: {sys.argv[1]}: jobs of {len(durations)} durations; it needs one")
    if max(sizes) > slots:
        sys.exit(f"wave-bound.py: a gang of {max(sizes)} pods does not fit {slots} slots")
    d = durations.pop()
    waves = math.ceil(sum(sizes) / slots)
    count = Counter(sizes)
    vals = sorted(count)

    def fills(cnt, lo, cap):
        """Multisets of cnt (counts per value) of lo to cap pods."""
        out = []

        def rec(i, rem, cur):
            if i == len(vals):
                if cap - rem >= lo:
                    out.append(tuple(cur))
                return
            for k in range(min(cnt[i], rem // vals[i]), -1, -1):
                rec(i + 1, rem - k * vals[i], cur + [k])

        rec(0, cap, [])
        return out

    def score(counts):
        return sum((i + 1) * n for i, n in enumerate(sorted(counts, reverse=True)))

    @functools.lru_cache(maxsize=None)
    def split(cnt, left):
        """The best sorted job counts of cnt in left waves, or None."""
        pods = sum(k * v for k, v in zip(cnt, vals))
        if pods == 0:
            return (0,) * left
        if left == 0 or pods > left * slots:
            return None
        hi = max(i for i, k in enumerate(cnt) if k > 0)  # the largest gang's wave
        best = None
        # a wave holds at least what the later waves cannot
        for s in fills(cnt, pods - (left - 1) * slots, slots):
            if s[hi] == 0:
                continue
            r = split(tuple(a - b for a, b in zip(cnt, s)), left - 1)
            if r is None:
                continue
            cand = tuple(sorted((sum(s),) + r, reverse=True))
            if best is None or score(cand) < score(best):
                best = cand
        return best

    best = split(tuple(count[v] for v in vals), waves)
    n = len(sizes)
    mean = sum((i + 1) * d * k for i, k in enumerate(best)) / n
    # smallest first, no makespan kept
    rem, greedy = sorted(sizes), []
    while rem:
        cap, wave = slots, []
        for s in list(rem):
            if s <= cap:
                wave.append(s)
                cap -= s
                rem.remove(s)
        greedy.append(len(wave))
    gmean = sum((i + 1) * d * k for i, k in enumerate(greedy)) / n
    print(f"{n} jobs, {sum(sizes)} pods, {slots} slots, {d:g} s each: shortest makespan {waves * d:g} s")
    print(f"at that makespan: waves of {', '.join(map(str, best))} jobs, mean JCT {mean:.1f} s")
    print(f"smallest first, makespan {len(greedy) * d:g} s: waves of {', '.join(map(str, greedy))} jobs, "
          f"mean JCT {gmean:.1f} s")


if __name__ == "__main__":
    main()

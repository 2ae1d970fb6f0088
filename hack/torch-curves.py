#!/usr/bin/env python3
"""torch-curves.py - turns make e2e-real-torch's logs into CSVs and a PNG.

Usage: torch-curves.py DIR OUT

DIR holds rank0.log (torch-train's worker 0, `kubectl logs -f --timestamps`:
the pod stays while torchrun restarts its rank), events.txt ("RFC3339
REASON MESSAGE" lines of the PyTorchJob's Events) and t0 (the submission
time, seconds since the epoch). Writes into OUT:

  curves.csv   seconds,step,loss,accuracy,world: one row per step line of
               rank 0 (accuracy as of the latest test, empty before the
               first)
  events.csv   seconds,reason,message: drake's scaling Events on the job,
               and each restart of rank 0 with the step it resumed at
  curves.png   accuracy, step and world size over time, drake's decisions
               and the restarts marked (gnuplot)

The figures are the trainer's and the API server's own: nothing here is
modelled.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from importlib import import_module

_train = import_module("train-curves")
ts, write_csv = _train.ts, _train.write_csv

STEP = re.compile(r"torch-train: step=(\d+) loss=([\d.]+) accuracy=([\d.]+) world=(\d+)")
RESTART = re.compile(r"torch-train: rank (\d+)/(\d+) restart (\d+) started at step (\d+)")
DONE = re.compile(r"torch-train: target reached: step=(\d+) accuracy=([\d.]+) world=(\d+)")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: torch-curves.py DIR OUT")
    d, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    t0 = float(open(os.path.join(d, "t0")).read())
    curves, events = [], []
    tested = False
    for line in open(os.path.join(d, "rank0.log")):
        stamp, _, rest = line.rstrip("\n").partition(" ")
        try:
            t = ts(stamp) - t0
        except ValueError:
            continue
        m = STEP.search(rest) or DONE.search(rest)
        if m and m.re is STEP:
            # torch-train logs 0 until its first test: no accuracy yet
            acc = m.group(3) if tested or float(m.group(3)) > 0 else ""
            tested = acc != ""
            curves.append([f"{t:.2f}", m.group(1), m.group(2), acc, m.group(4)])
        elif m:
            loss = curves[-1][2] if curves else ""
            curves.append([f"{t:.2f}", m.group(1), loss, m.group(2), m.group(3)])
        m = RESTART.search(rest)
        if m and m.group(3) != "0":  # restart 0 is the first start
            events.append([f"{t:.2f}", "restart",
                           f"rank {m.group(1)}/{m.group(2)} restart {m.group(3)} at step {m.group(4)}"])
    for line in open(os.path.join(d, "events.txt")):
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) < 3 or parts[1] not in ("ScaledDown", "ScaledUp"):
            continue
        try:
            t = ts(parts[0]) - t0
        except ValueError:
            continue
        events.append([f"{t:.2f}", parts[1], parts[2]])
    events.sort(key=lambda e: float(e[0]))
    if not curves:
        sys.exit(f"torch-curves.py: no step line in {os.path.join(d, 'rank0.log')}")

    write_csv(os.path.join(out, "curves.csv"), ["seconds", "step", "loss", "accuracy", "world"], curves)
    write_csv(os.path.join(out, "events.csv"), ["seconds", "reason", "message"], events)
    marks = []
    for t, reason, _ in events:
        colour = "gray" if reason == "restart" else "red"
        marks.append(f'set arrow from {t}, graph 0 to {t}, graph 1 nohead dt 2 lc rgb "{colour}"')
        if reason != "restart":
            marks.append(f'set label "{reason}" at {t}, graph 0.05 rotate by 90 font ",8"')
    data = os.path.join(out, "curves.csv")
    script = "\n".join([
        "set terminal pngcairo size 900,900",
        f"set output '{os.path.join(out, 'curves.png')}'",
        "set datafile separator ','",
        'set multiplot layout 3,1 title "torch-train (torchrun elastic, c10d, gloo) on 2 real nodes under drake\\n'
        'a PyTorchJob of 2 workers, min 1: shrunk for a TFJob, grown back (red: drake\'s Events; gray: rank 0 restarts)"',
        "set tmargin 4",
        "set key bottom right",
        "set grid",
        "set xrange [0:*]",
        "set ylabel 'test accuracy (latest test)'",
        "set yrange [0:1]",
        *marks,
        f"plot '{data}' using 1:(strcol(4) ne '' ? $4 : 1/0) every ::1 with steps lw 2 title 'rank 0'",
        "unset label",
        "set ylabel 'step (resumed, not restarted)'",
        "set yrange [0:*]",
        f"plot '{data}' using 1:2 every ::1 with steps lw 2 title 'rank 0'",
        "set xlabel 'seconds since submission'",
        "set ylabel 'ranks in the world'",
        "set yrange [0:3]",
        f"plot '{data}' using 1:5 every ::1 with steps lw 2 title 'world size'",
        "unset multiplot",
    ])
    subprocess.run(["gnuplot"], input=script.encode(), check=True)


if __name__ == "__main__":
    main()

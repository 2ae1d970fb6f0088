#!/usr/bin/env python3
"""train-curves.py - turns bench-train-real.sh's logs into CSVs and a PNG.

Usage: train-curves.py OUT RUN=DIR...

Each DIR holds ps.log (the PS's log, `kubectl logs --timestamps`),
events.txt ("RFC3339 REASON MESSAGE" lines of the TFJob's Events) and t0
(the submission time, seconds since the epoch). Writes into OUT:

  curves.csv   run,seconds,step,accuracy,workers: one row per PS log line
               (accuracy as of the latest evaluation, empty before one)
  events.csv   run,seconds,reason,message: the TFJob's scaling and
               migration Events, and the PS's joins and leaves
  changes.csv  run,change,decided_s,effective_s,latency_s: per membership
               change, when drake decided it (its Event) and when the PS saw
               it (a worker left, or joined at a step > 0)
  summary.csv  run,target_s,steps,steps_per_s: time from submission to the
               PS's "target reached", steps then, mean steps/s
  curves.png   accuracy over time of every run, each scaling or migration
               decision marked (gnuplot)
"""
import csv
import datetime
import os
import re
import subprocess
import sys


def ts(s):
    s = s.rstrip("Z")
    if "." in s:
        head, frac = s.split(".")
        s = head + "." + frac[:6]
        fmt = "%Y-%m-%dT%H:%M:%S.%f"
    else:
        fmt = "%Y-%m-%dT%H:%M:%S"
    return datetime.datetime.strptime(s, fmt).replace(tzinfo=datetime.timezone.utc).timestamp()


def write_csv(path, head, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        w.writerows(rows)


STEP = re.compile(r"ps: step=(\d+) steps/s=[\d.]+ accuracy=([\d.]+|-)\S* workers=(\d+)")
MEMBER = re.compile(r"ps: worker (\d+) (joined|rejoined|left) at step (\d+)")
DONE = re.compile(r"ps: finished at step (\d+): accuracy ([\d.]+) .*\((target reached|step cap reached)\), ([\d.]+) s")


def main():
    out = sys.argv[1]
    runs = [a.split("=", 1) for a in sys.argv[2:]]
    os.makedirs(out, exist_ok=True)
    curves, events, changes, summary = [], [], [], []
    for run, d in runs:
        t0 = float(open(os.path.join(d, "t0")).read())
        members = []
        for line in open(os.path.join(d, "ps.log")):
            stamp, _, rest = line.rstrip("\n").partition(" ")
            try:
                t = ts(stamp) - t0
            except ValueError:
                continue
            m = STEP.search(rest)
            if m:
                acc = "" if m.group(2) == "-" else m.group(2)
                curves.append([run, f"{t:.2f}", m.group(1), acc, m.group(3)])
            m = MEMBER.search(rest)
            if m:
                members.append((t, int(m.group(1)), m.group(2), int(m.group(3))))
                events.append([run, f"{t:.2f}", "ps-" + m.group(2), f"worker {m.group(1)} at step {m.group(3)}"])
            m = DONE.search(rest)
            if m and curves and curves[-1][0] == run:
                # the coordinator's last evaluation, which ended the job
                curves.append([run, f"{t:.2f}", m.group(1), m.group(2), curves[-1][4]])
            if m and m.group(3) == "target reached":
                summary.append([run, f"{t:.1f}", m.group(1), f"{int(m.group(1)) / t:.2f}"])
        decided = []
        for line in open(os.path.join(d, "events.txt")):
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) < 3:
                continue
            t = ts(parts[0]) - t0
            events.append([run, f"{t:.2f}", parts[1], parts[2]])
            decided.append((t, parts[1], parts[2]))
        # each decision, matched with the first PS event it explains
        used = set()
        for t, reason, msg in sorted(decided):
            if reason == "ScaledDown":
                n = int(re.search(r"gave (\d+) worker", msg).group(1)) if re.search(r"gave (\d+) worker", msg) else 1
                want, what = "left", f"shrink by {n}"
            elif reason == "ScaledUp":
                n = int(re.search(r"\+(\d+) worker", msg).group(1)) if re.search(r"\+(\d+) worker", msg) else 1
                want, what = "rejoined", f"grow by {n}"
            elif reason == "MigrationStarted":
                n, want, what = 1, "rejoined", "migration"
            else:
                continue
            # events have whole seconds: a PS line up to 1 s before counts
            hits = [i for i, m in enumerate(members) if i not in used and m[2] == want and m[0] >= t - 1]
            for i in hits[:n]:
                used.add(i)
            if len(hits) >= n:
                eff = members[hits[n - 1]][0]
                changes.append([run, what, f"{t:.1f}", f"{eff:.1f}", f"{max(eff - t, 0):.1f}"])
    def write(name, head, rows):
        write_csv(os.path.join(out, name), head, rows)
    write("curves.csv", ["run", "seconds", "step", "accuracy", "workers"], curves)
    write("events.csv", ["run", "seconds", "reason", "message"], events)
    write("changes.csv", ["run", "change", "decided_s", "effective_s", "latency_s"], changes)
    write("summary.csv", ["run", "target_s", "steps", "steps_per_s"], summary)
    # the plot: one line per run, a dashed mark per decision
    marks = []
    for run, t, reason, msg in events:
        if reason in ("ScaledDown", "ScaledUp", "MigrationStarted"):
            marks.append(f'set arrow from {t}, graph 0 to {t}, graph 1 nohead dt 2 lc rgb "gray"')
            marks.append(f'set label "{reason} ({run})" at {t}, graph 0.05 rotate by 90 font ",8"')
    data = os.path.join(out, "curves.csv")
    acc = ", ".join(
        f"'{data}' using (strcol(1) eq '{run}' && strcol(4) ne '' ? $2 : 1/0):4 "
        f"with steps lw 2 title '{run}'" for run, _ in runs)
    width = ", ".join(
        f"'{data}' using (strcol(1) eq '{run}' ? $2 : 1/0):5 with steps lw 2 title '{run}'"
        for run, _ in runs)
    script = "\n".join([
        "set terminal pngcairo size 900,700",
        f"set output '{os.path.join(out, 'curves.png')}'",
        "set datafile separator ','",
        'set multiplot layout 2,1 title "drake-train on 2 real nodes under drake, 300 ms per step, '
        'target 0.96\\nfixed, elastic: 1 PS + 4 workers of 4 GPUs; migrate: 1 PS + 3 workers of 1 GPU"',
        "set tmargin 4",
        "set key bottom right",
        "set grid",
        "set xrange [0:*]",
        "set ylabel 'test accuracy (latest evaluation)'",
        "set yrange [0.8:1]",
        *marks,
        "plot " + acc,
        "unset label",
        "set xlabel 'seconds since submission'",
        "set ylabel 'workers training (PS)'",
        "set yrange [0:5]",
        "plot " + width,
        "unset multiplot",
    ])
    subprocess.run(["gnuplot"], input=script.encode(), check=True)


if __name__ == "__main__":
    main()

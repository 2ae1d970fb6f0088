#!/usr/bin/python3
"""torch-train: drake's example elastic PyTorch trainer (examples/torch-train).

One process per node under torchrun's elastic agent (c10d rendezvous), gloo
on CPU: synchronous data-parallel SGD of a 64-32-10 perceptron on
scikit-learn's digits (the file drake-train learns, from Debian's
python3-sklearn), until a target test accuracy.

torchrun restarts every worker process of the job on any membership change
(a node added or removed). So each rank checkpoints the whole training
state to a local file every --checkpoint-every steps, and after each
(re)start the ranks agree on the newest checkpoint any of them holds (an
all_gather of the steps) and its holder broadcasts it: a node that was
never in the job, or whose file was lost with its pod, trains on from the
same step as the others. A job shrunk or grown by drake therefore loses at
most --checkpoint-every steps, never its training.

Rank 0 reports its test accuracy to drake with `drake progress` (when
DRAKE_PROGRESS_URL is set: drake's controller sets it on the pod), in the
background, never holding training up.

Every flag has an environment variable (its name in upper case with
TORCH_TRAIN_ in front, e.g. TORCH_TRAIN_TARGET for --target), as the
PyTorchJob's container env sets them. Lines it prints (stdout, unbuffered):
  torch-train: rank R/W restart N started at step S (...)
  torch-train: step=S loss=L accuracy=A world=W
  torch-train: target reached: step=S accuracy=A world=W
"""
import argparse
import datetime
import gzip
import os
import subprocess
import sys
import time

import torch
import torch.distributed as dist

DEFAULTS = [
    ("data", str, "/usr/share/drake-train/digits.csv.gz", "the digits, gzip CSV: 64 pixels and a label a row"),
    ("target", float, 0.96, "stop at this test accuracy"),
    ("max-steps", int, 20000, "stop after this many steps at most"),
    ("batch-size", int, 32, "global minibatch, split across the ranks"),
    ("learning-rate", float, 0.1, "SGD's learning rate"),
    ("hidden", int, 32, "hidden tanh units"),
    ("seed", int, 1, "initial weights and minibatch order"),
    ("eval-every", int, 50, "test the model every this many steps"),
    ("checkpoint", str, "/tmp/torch-train/checkpoint.pt", "this rank's checkpoint file"),
    ("checkpoint-every", int, 10, "write the checkpoint every this many steps (0: never)"),
    ("step-delay", float, 0.0, "seconds of made-up compute per step, shared by the ranks (each sleeps it / world)"),
    ("log-interval", float, 5.0, "seconds between step lines"),
    ("report-interval", float, 10.0, "seconds between progress reports to drake"),
    ("drake", str, "drake", "the drake binary, for `drake progress`"),
    ("gloo-timeout", float, 30.0, "seconds a collective may wait for a peer"),
]


def parse_args(argv):
    p = argparse.ArgumentParser(prog="torch-train", description=__doc__.split("\n")[0])
    for name, kind, default, helptext in DEFAULTS:
        var = "TORCH_TRAIN_" + name.upper().replace("-", "_")
        p.add_argument("--" + name, type=kind, default=kind(os.environ.get(var, default)),
                       help="%s (%s, default %s)" % (helptext, var, default))
    return p.parse_args(argv)


def log(msg):
    print("torch-train: " + msg, flush=True)


def load_digits(path):
    """The rows of PATH as (pixels / 16, labels); every fifth row (4, 9, ...)
    is the test set, as drake-train splits it."""
    xs, ys = [], []
    with gzip.open(path, "rt") as f:
        for n, line in enumerate(f, 1):
            fields = line.strip().split(",")
            if len(fields) != 65:
                sys.exit("torch-train: %s:%d: %d fields, want 65" % (path, n, len(fields)))
            try:
                xs.append([float(v) / 16.0 for v in fields[:64]])
                ys.append(int(fields[64]))
            except ValueError:
                sys.exit("torch-train: %s:%d: a field is not a number" % (path, n))
    x, y = torch.tensor(xs), torch.tensor(ys)
    test = torch.arange(len(ys)) % 5 == 4
    return x[~test], y[~test], x[test], y[test]


def flat(tensors):
    return torch.cat([t.reshape(-1) for t in tensors])


def unflat(vec, tensors):
    off = 0
    for t in tensors:
        t.copy_(vec[off:off + t.numel()].view_as(t))
        off += t.numel()


def save(path, step, model, accuracy):
    """PATH's checkpoint, written whole or not at all (rename)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    torch.save({"step": step, "accuracy": accuracy, "model": model.state_dict()}, tmp)
    os.replace(tmp, path)


def resume(path, model, rank, world):
    """Every rank's (step, accuracy) from the newest checkpoint among them:
    its holder (the lowest such rank) broadcasts it. (0, 0.0) when none has
    one. Returns (step, accuracy, holder or -1)."""
    mine = -1
    acc = 0.0
    if os.path.exists(path):
        try:
            ck = torch.load(path)
            model.load_state_dict(ck["model"])
            mine, acc = int(ck["step"]), float(ck["accuracy"])
        except Exception as e:  # a torn or foreign file: start without it
            log("rank %d: checkpoint %s unreadable (%s); not using it" % (rank, path, e))
    steps = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(steps, torch.tensor([mine], dtype=torch.int64))
    steps = [int(s.item()) for s in steps]
    best = max(steps)
    holder = steps.index(best) if best >= 0 else 0
    params = list(model.state_dict().values())
    state = torch.cat([flat(params), torch.tensor([float(max(best, 0)), acc])])
    dist.broadcast(state, src=holder)
    with torch.no_grad():
        unflat(state[:-2], params)
    return int(state[-2].item()), float(state[-1].item()), holder if best >= 0 else -1


class Reporter:
    """`drake progress` in the background, one at a time, every INTERVAL s."""

    def __init__(self, drake, interval, total):
        self.on = bool(os.environ.get("DRAKE_PROGRESS_URL"))
        self.drake, self.interval, self.total = drake, interval, total
        self.proc, self.last = None, -1e18

    def tick(self, step, accuracy, force=False):
        if not self.on or (not force and time.monotonic() - self.last < self.interval):
            return
        if self.proc is not None:
            if self.proc.poll() is None:
                return
            if self.proc.returncode != 0:
                log("drake progress failed (exit %d); training goes on" % self.proc.returncode)
        self.last = time.monotonic()
        try:
            self.proc = subprocess.Popen([self.drake, "progress", "--step", str(min(step, self.total)),
                                          "--value", "%.6f" % accuracy, "--metric", "accuracy",
                                          "--total-steps", str(self.total)])
        except OSError as e:
            self.proc = None
            log("cannot run %s: %s; training goes on" % (self.drake, e))

    def close(self):
        if self.proc is not None:
            self.proc.wait()


def main(argv):
    a = parse_args(argv)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=a.gloo_timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    xtr, ytr, xte, yte = load_digits(a.data)
    torch.manual_seed(a.seed)
    model = torch.nn.Sequential(torch.nn.Linear(64, a.hidden), torch.nn.Tanh(), torch.nn.Linear(a.hidden, 10))
    opt = torch.optim.SGD(model.parameters(), lr=a.learning_rate)
    step, acc, holder = resume(a.checkpoint, model, rank, world)
    log("rank %d/%d restart %d started at step %d (%s)" % (
        rank, world, restart, step,
        "from rank %d's checkpoint" % holder if holder >= 0 else "no checkpoint: from the seed's weights"))
    reporter = Reporter(a.drake, a.report_interval, a.max_steps) if rank == 0 else None
    params = list(model.parameters())
    last_log = None
    done = torch.zeros(1)
    while step < a.max_steps:
        g = torch.Generator().manual_seed(a.seed * 1000003 + step)
        idx = torch.randint(0, len(ytr), (a.batch_size,), generator=g)[rank::world]
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xtr[idx]), ytr[idx], reduction="sum") / a.batch_size
        loss.backward()
        grads = flat([p.grad for p in params])
        dist.all_reduce(grads)
        unflat(grads, [p.grad for p in params])
        opt.step()
        step += 1
        if step % a.eval_every == 0:
            with torch.no_grad():
                acc = (model(xte).argmax(1) == yte).float().mean().item()
            done[0] = 1.0 if acc >= a.target else 0.0
            dist.all_reduce(done, op=dist.ReduceOp.MAX)
        if a.checkpoint_every > 0 and (step % a.checkpoint_every == 0 or done[0] > 0):
            save(a.checkpoint, step, model, acc)
        now = time.monotonic()
        if rank == 0 and (last_log is None or now - last_log >= a.log_interval or done[0] > 0):
            # the first step after each (re)start is always logged
            log("step=%d loss=%.4f accuracy=%.4f world=%d" % (step, loss.item() * a.batch_size / len(idx), acc, world))
            last_log = now
        if reporter:
            reporter.tick(step, acc, force=done[0] > 0)
        if done[0] > 0:
            break
        if a.step_delay > 0:
            # the minibatch's compute, split across the ranks as a real
            # data-parallel step's is: more ranks, more steps a second
            time.sleep(a.step_delay / world)
    if rank == 0:
        if done[0] > 0:
            log("target reached: step=%d accuracy=%.4f world=%d" % (step, acc, world))
        else:
            log("step cap reached: step=%d accuracy=%.4f world=%d" % (step, acc, world))
        reporter.close()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""The supervision experiments of docs/learnability.md (issue 36): which
instances `python3 -m tcforge_torch train` learns from scratch with how
much of the working shown — no trace, the trace at round boundaries, every
K levels, every level, every level with the FFN units (the gates), and
chain of thought (a causal model writing the decoder's working, full or
thinned) — plus the controls (the constant predictor, a learning-rate
sweep of the no-trace cell).

Every run is one command (`--list` prints them, one a line: a cluster
array runs line $TASK_ID independently; each resumes from its checkpoint
and is skipped once done). `--run` runs them here, one at a time, with two
economies that change no figure of a run, only which runs exist:

  seeds     a cell's seeds 0, 1, … run until the criterion "≥ 99 % exact on
            ≥ 4 of 5 seeds" is decided: 4 seeds at ≥ 99 % (met), or 2 below
            it (not met; then the cell has 2 or 3 seeds, which the table
            says);
  rounds    a supervision is not run at r rounds of a family once it, or a
            denser supervision of its kind (trace or chain of thought),
            failed the criterion at r rounds or fewer.

    scripts/learnability_trace.py --export          # the models and the CoT sequence files
    scripts/learnability_trace.py --run [--only RE] # the runs (docs/learnability/trace/)
    scripts/learnability_trace.py --list            # the runs' commands, one a line
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.environ.get("OUT", "out/learnability")
M = f"{OUT}/models"
COT = f"{OUT}/cot"
RUNS = os.environ.get("RUNS", "docs/learnability/trace")
PY = os.environ.get("PYTHON", "/usr/bin/python3")
SEEDS = 5
GOOD = 0.99

# The instances: (family, label, rounds, the train config, data sizes).
def keccak(w, r):
    return f"{M}/learn-keccak.log_w-{w}_rounds-{r}.fusion.tokens-as-states-stock.json"


def sha256(r):
    return f"{M}/learn-sha256-residual.rounds-{r}.fusion.no-attention-residual.json"


ADDER = f"{M}/learn-adder.fusion.tokens-as-states-stock.json"

# Supervisions, sparsest first: (key, label, train args). The table orders
# them so; "sparsest that learns" is the first of these that meets the
# criterion.
TRACES = [
    ("none", "no trace", []),
    ("rounds", "trace at round boundaries", ["--trace", "rounds"]),
    ("every", "trace every level", ["--trace", "every"]),
    ("units", "trace every level + units", ["--trace", "every", "--trace-units", "1"]),
]
COTS = [
    ("cot0", "CoT, digest only", ["--working", "0"]),
    ("cot2", "CoT, working every 2 steps", ["--working", "2"]),
    ("cot1", "CoT, working every step", ["--working", "1"]),
]


def cot_file(fam, r):
    return f"{COT}/{fam}-r{r}.k1.cot.json"


# Budgets: steps, log interval, batch, training and held-out inputs. Runs
# stop at the first log row where the exact rate on (1,024 of) the
# training inputs is ≥ 99.8 % (--stop-on train: the held-out figure is not
# selected on).
KECCAK_BUDGET = dict(steps=10000, log=500, batch=128, train=16384, heldout=1024)
SHA_BUDGET = dict(steps=2000, log=100, batch=128, train=16384, heldout=1024)
ADDER_BUDGET = dict(steps=1500, log=50, batch=128, train=4096, heldout=1024)
COT_BUDGET = dict(steps=1500, log=250, batch=64, train=16384, heldout=512)
STOP = ["--stop-on", "train", "--stop-at", "0.998"]
# The CoT student: the decoder's layers and heads, a narrower stream
# (d_model 80, FFN 160): a sixth of the decoder's CPU a step.
COT_SHAPE = ["--d-model", "80", "--ffn", "160"]
# Supervisions run (the units trace is an option of train, not in the
# grid: on the stock students its loss plateaus, see the doc).
GRID_TRACES = ["none", "rounds", "every"]
GRID_COTS = ["cot0", "cot1"]


def cells():
    """Every cell: dict(family, instance, rounds, sup, label, config,
    args, budget)."""
    out = []
    fams = [("keccak-w1", "Keccak w=1", lambda r: keccak(0, r), [1, 2, 3, 4]),
            ("keccak-w2", "Keccak w=2", lambda r: keccak(1, r), [1, 2, 3, 4]),
            ("sha256", "SHA-256", sha256, [1, 2, 3, 4])]
    for fam, label, cfg, rounds in fams:
        budget = SHA_BUDGET if fam == "sha256" else KECCAK_BUDGET
        for r in rounds:
            inst = f"{label} r={r}"
            for key, sup, args in TRACES:
                if key not in GRID_TRACES or (key == "rounds" and r == 1):
                    continue  # one round: its only round boundary is the output
                out.append(dict(family=fam, instance=inst, rounds=r, sup=key, label=sup, config=cfg(r), args=args, budget=budget))
            if fam == "keccak-w1":
                for key, sup, args in COTS:
                    if key in GRID_COTS:
                        out.append(dict(family=fam, instance=inst, rounds=r, sup=key, label=sup, config=cot_file(fam, r),
                                        args=args + COT_SHAPE, budget=COT_BUDGET))
    for key, sup, args in TRACES[:1] + TRACES[2:3]:
        out.append(dict(family="adder", instance="adder n=8", rounds=1, sup=key, label=sup, config=ADDER, args=args, budget=ADDER_BUDGET))
    out.append(dict(family="adder", instance="adder n=8", rounds=1, sup="cot1", label=COTS[2][1], config=cot_file("adder", 1),
                    args=COTS[2][2] + COT_SHAPE, budget=COT_BUDGET))
    # Controls: the constant predictor; the learning-rate sweep of the
    # no-trace cell (3e-3 is the default, the cell itself), one seed each.
    for fam, inst, cfg, b in (("keccak-w1", "Keccak w=1 r=1", keccak(0, 1), KECCAK_BUDGET), ("sha256", "SHA-256 r=1", sha256(1), SHA_BUDGET)):
        out.append(dict(family=fam, instance=inst, rounds=1, sup="constant", label="constant", config=cfg, args=["--init", "constant"],
                        budget=b, control=True))
        for lr in ("1e-3", "1e-2") if fam == "keccak-w1" else ():  # the CPU budget: Keccak's no-trace cell only
            out.append(dict(family=fam, instance=inst, rounds=1, sup=f"none-lr{lr}", label=f"no trace, lr {lr}", config=cfg,
                            args=["--lr", lr], budget=b, control=True))
    return out


def command(c, seed):
    b = c["budget"]
    args = [PY, "-m", "tcforge_torch", "train", c["config"], "--instance", c["instance"], "--experiment", c["label"],
            "--seed", str(seed), "--steps", str(b["steps"]), "--log-every", str(b["log"]), "--batch", str(b["batch"]),
            "--train", str(b["train"]), "--heldout", str(b["heldout"]), "--out", RUNS, "--plot", "0", "--progress", "never"]
    if c["sup"] != "constant":
        args += ["--resume", "1", "--checkpoint-every", str(b["log"] * 4)] + STOP
    return args + c["args"]


def result(c, seed):
    """The run's final held-out exact rate, or None if it has not run."""
    for f in os.listdir(RUNS) if os.path.isdir(RUNS) else []:
        if not f.endswith(".json"):
            continue
        try:
            with open(os.path.join(RUNS, f)) as fh:
                m = json.load(fh)
        except (OSError, ValueError):
            continue
        if m.get("status") == "done" and m.get("instance") == c["instance"] and m.get("experiment") == c["label"] and m.get("seed") == seed:
            return (m.get("final") or {}).get("exact")
    return None


def run(c, seed):
    cmd = command(c, seed)
    print("+", " ".join(shlex.quote(a) for a in cmd), file=sys.stderr, flush=True)
    env = dict(os.environ, PYTHONPATH="python", PYTHONDONTWRITEBYTECODE="1")
    subprocess.run(["nice", "-n", "10"] + cmd, cwd=ROOT, env=env, check=True)
    return result(c, seed)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--list", action="store_true", help="print every run's command, one a line")
    g.add_argument("--run", action="store_true", help="run them here, with the seed and round economies")
    g.add_argument("--export", action="store_true", help="export the models and write the CoT sequence files")
    p.add_argument("--only", default="", help="a regular expression on 'family instance supervision'")
    a = p.parse_args(argv)
    os.chdir(ROOT)
    if a.export:
        subprocess.run(["go", "build", "-o", "bin/tcforge-plugin-adder", "./plugins/adder/cmd/tcforge-plugin-adder"], check=True)
        subprocess.run(["go", "run", "./host/cmd/tcforge", "run", "--plugin-dir", "bin", "--progress", "never", "--out", OUT, "--export", M,
                        "configs/learnability.hcl"], check=True)
        os.makedirs(COT, exist_ok=True)
        subprocess.run(["go", "run", "./python/cotseq/cmd/tcforge-cotseq", "-construction", "adder", "-set", "n=8", "-layerer", "fusion",
                        "-k", "1", "-count", "20000", "-instance", "adder n=8", "-o", cot_file("adder", 1)], check=True)
        for fam, w in (("keccak-w1", 0),):
            for r in (1, 2, 3, 4):
                subprocess.run(["go", "run", "./python/cotseq/cmd/tcforge-cotseq", "-construction", "keccak", "-set", f"log_w={w}",
                                "-set", f"rate={16 << w}", "-set", f"rounds={r}", "-set", "blocks=1", "-set", "padding=none",
                                "-layerer", "fusion", "-k", "1", "-count", "20000", "-instance", f"Keccak w={1 << w} r={r}",
                                "-o", cot_file(fam, r)], check=True)
        return 0
    sel = [c for c in cells() if re.search(a.only, f"{c['family']} {c['instance']} {c['sup']}")]
    if a.list:
        for c in sel:
            for s in range(SEEDS):
                print(" ".join(shlex.quote(x) for x in command(c, s)))
        return 0
    failed = set()  # (family, sup, rounds) that failed
    order = [k for k, _, _ in TRACES] + [k for k, _, _ in COTS]
    dense = {k: order[i + 1:] for i, k in enumerate(order)}  # the denser supervisions of each
    for c in sorted(sel, key=lambda c: (c["family"], c["rounds"], -order.index(c["sup"]) if c["sup"] in order else 0)):
        if not c.get("control"):
            if any((c["family"], c["sup"], r) in failed for r in range(1, c["rounds"])):
                print(f"skip {c['instance']} {c['label']}: not learned at fewer rounds", file=sys.stderr)
                continue
            same_kind = [k for k in dense.get(c["sup"], []) if (k in GRID_TRACES) == (c["sup"] in GRID_TRACES)]
            d = [] if c["sup"] == "none" and c["rounds"] == 1 else \
                [k for k in same_kind if any((c["family"], k, r) in failed for r in range(1, c["rounds"] + 1))]
            if d:
                print(f"skip {c['instance']} {c['label']}: the denser {d[0]} was not learned", file=sys.stderr)
                continue
        good = bad = 0
        for s in range(1 if c.get("control") else SEEDS):
            ex = result(c, s)
            if ex is None:
                ex = run(c, s)
            if ex is not None and ex >= GOOD:
                good += 1
            else:
                bad += 1
            if good >= 4 or bad >= 2:
                break
        if bad >= 2 and not c.get("control"):
            failed.add((c["family"], c["sup"], c["rounds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

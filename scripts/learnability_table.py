#!/usr/bin/env python3
"""The table and plots of docs/learnability.md, from the runs' files.

Reads every RUNS/*.json (a run's settings, written by `python3 -m
tcforge_torch train`) with its RUNS/*.csv (the run's log rows; every
figure comes from the CSV), groups the runs by instance and experiment,
and writes the markdown table between the markers
<!-- learnability:table --> and <!-- /learnability:table --> of the doc,
and the plots PLOTS/scratch.svg and PLOTS/basin.svg. Standard library only.

    scripts/learnability_table.py --write    # rewrite the doc's tables and the plots
    scripts/learnability_table.py --check    # exit 1 if they differ from the runs (go test ./python)
"""

import argparse
import csv
import glob
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- learnability:table -->", "<!-- /learnability:table -->"
ORDER = ["adder", "Keccak w=1", "Keccak w=2", "SHA-256", "SHA3-256"]


def load_runs(runs):
    out = []
    for j in sorted(glob.glob(os.path.join(runs, "*.json"))):
        with open(j) as f:
            meta = json.load(f)
        if meta.get("status") != "done":
            print(f"{j}: status {meta.get('status')!r}, left out", file=sys.stderr)
            continue
        with open(j[:-5] + ".csv") as f:
            rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
        if not rows:
            raise SystemExit(f"{j[:-5]}.csv: no rows")
        meta["rows"] = rows
        meta["file"] = os.path.basename(j[:-5])
        out.append(meta)
    return out


def inst_key(name):
    for i, p in enumerate(ORDER):
        if name.startswith(p):
            return (i, name)
    return (len(ORDER), name)


def exp_key(m):
    return ({"constant": 0, "scratch": 1, "answer": 2}[m["init"]], -m["width"] if m["init"] == "scratch" and m["width"] == 1 else m["width"], m["sigma"])


def groups(runs):
    g = {}
    for m in runs:
        g.setdefault((m["instance"], m["experiment"]), []).append(m)
    return sorted(g.items(), key=lambda kv: (inst_key(kv[0][0]), exp_key(kv[1][0])))


def shape(m):
    s = m["shape"]
    if m["kind"] == "mlp":
        return ("residual RMSNorm " if s.get("norm") else "") + f"MLP d={s['d_model']} L={s['blocks']} F≤{s['ffn']}"
    return f"T={s['tokens']} d={s['d_model']} L={s['blocks']} h={s['heads']} F={s['ffn']}"


def fmt(v, digits=4):
    return f"{v:.{digits}f}"


def span(vals, digits=4):
    lo, hi, mean = min(vals), max(vals), sum(vals) / len(vals)
    if len(vals) == 1 or hi - lo < 0.5 * 10 ** -digits:
        return fmt(mean, digits)
    return f"{fmt(mean, digits)} ({fmt(lo, digits)}–{fmt(hi, digits)})"


def table(runs):
    lines = ["| instance | shape | experiment | data: train / held-out; bits varying of output bits | steps (budget) | bit accuracy | varying bits | exact at step 0 | exact (final) | seeds at 100 % | CPU s | seeds |",
             "|---|---|---|---|---|---|---|---|---|---|---:|---:|"]
    total = 0.0
    for (inst, exp), ms in groups(runs):
        last = [m["rows"][-1] for m in ms]
        first = [m["rows"][0] for m in ms]
        cpu = sum(r["cpu_s"] for r in last)
        total += cpu
        steps = sorted({int(r["step"]) for r in last})
        st = "–" if ms[0]["init"] == "constant" else (f"{steps[0]}" if len(steps) == 1 else f"{steps[0]}–{steps[-1]}") + f" ({ms[0]['steps']})"
        ex = "–" if ms[0]["init"] == "constant" else span([r["exact"] for r in first])
        full = sum(1 for r in last if r["exact"] == 1.0)
        lines.append(f"| {inst} | {shape(ms[0])} | {exp} | {ms[0]['train']:,} / {ms[0]['heldout']:,}; {ms[0]['varying_outputs']} of {ms[0]['outputs']} | {st} | "
                     f"{span([r['bit_acc'] for r in last])} | {span([r['var_bit_acc'] for r in last])} | {ex} | "
                     f"{span([r['exact'] for r in last])} | {full}/{len(ms)} | {cpu:.1f} | {len(ms)} |")
    lines.append("")
    seen = set()
    for m in sorted(runs, key=lambda m: (inst_key(m["instance"]), m["seed"])):
        if m.get("init_activation_std") and m["width"] == 1 and m["instance"] not in seen:
            seen.add(m["instance"])
            stds = ", ".join(f"{v:.2g}" for v in m["init_activation_std"])
            lines.append(f"{m['instance']} from scratch (seed {m['seed']}): standard deviation of x at initialisation, "
                         f"after the embedding and after each block: {stds}.  ")
    lines.append(f"{len(runs)} runs; CPU time of the training processes (the CSVs' `cpu_s`, after importing torch): "
                 f"**{total:.0f} s = {total / 60:.1f} CPU-minutes**.")
    return "\n".join(lines) + "\n"


# ---- plots (hand-written SVG) ----

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]


def _svg_open(w, h, title):
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="10">',
            f'<rect width="{w}" height="{h}" fill="white"/>',
            f'<text x="{w / 2}" y="14" text-anchor="middle" font-size="12">{title}</text>']


def scratch_svg(runs):
    """One panel per instance (from scratch, compiled width): held-out
    varying-bit accuracy (blue) and exact-output rate (red), one line a seed."""
    sel = {}
    for m in runs:
        if m["init"] == "scratch" and m["width"] == 1:
            sel.setdefault(m["instance"], []).append(m)
    names = sorted(sel, key=inst_key)
    cols, pw, ph = 3, 220, 150
    rows_n = (len(names) + cols - 1) // cols
    W, H = cols * pw + 20, rows_n * ph + 40
    out = _svg_open(W, H, "from scratch at the compiled shape: held-out varying-bit accuracy (blue), exact-output rate (red); one line a seed")
    for i, name in enumerate(names):
        x0, y0 = 10 + (i % cols) * pw, 25 + (i // cols) * ph
        L, T, R, B = x0 + 30, y0 + 15, x0 + pw - 10, y0 + ph - 20
        smax = max(r["step"] for m in sel[name] for r in m["rows"]) or 1
        out.append(f'<text x="{(L + R) / 2}" y="{y0 + 10}" text-anchor="middle">{name}</text>')
        out.append(f'<rect x="{L}" y="{T}" width="{R - L}" height="{B - T}" fill="none" stroke="#999"/>')
        for v in (0, 0.5, 1):
            y = B - (B - T) * v
            out.append(f'<line x1="{L}" y1="{y:.1f}" x2="{R}" y2="{y:.1f}" stroke="#eee"/><text x="{L - 3}" y="{y + 3:.1f}" text-anchor="end">{v:g}</text>')
        out.append(f'<text x="{R}" y="{B + 11}" text-anchor="end">{int(smax)} steps</text>')
        for m in sel[name]:
            for col, color in (("var_bit_acc", "#1f77b4"), ("exact", "#d62728")):
                pts = " ".join(f"{L + (R - L) * r['step'] / smax:.1f},{B - (B - T) * r[col]:.1f}" for r in m["rows"])
                out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1" points="{pts}"/>')
    out.append("</svg>\n")
    return "\n".join(out)


def basin_svg(runs):
    """Exact-output rate against σ (log scale; σ = 0 drawn at the left),
    at step 0 (dashed: the noise alone) and after the budget (solid),
    mean over seeds, one color an instance."""
    sel = {}
    for m in runs:
        if m["init"] == "answer" and m.get("noise", "tensor") == "tensor":
            sel.setdefault(m["instance"], {}).setdefault(m["sigma"], []).append(m)
    names = sorted(sel, key=inst_key)
    sig = sorted({s for d in sel.values() for s in d if s > 0})
    if not sig:
        return None
    lo, hi = math.log10(sig[0]) - 1, math.log10(sig[-1])
    W, H, L, T, R, B = 640, 340, 50, 30, 470, 300
    out = _svg_open(W, H, "from the answer: held-out exact rate vs noise σ; dashed: at step 0, solid: after training")

    def px(s):
        return L + (R - L) * ((math.log10(s) if s > 0 else lo) - lo) / (hi - lo)

    def py(v):
        return B - (B - T) * v

    out.append(f'<rect x="{L}" y="{T}" width="{R - L}" height="{B - T}" fill="none" stroke="#999"/>')
    for v in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<line x1="{L}" y1="{py(v):.1f}" x2="{R}" y2="{py(v):.1f}" stroke="#eee"/><text x="{L - 4}" y="{py(v) + 3:.1f}" text-anchor="end">{v:g}</text>')
    out.append(f'<text x="{px(0)}" y="{B + 12}" text-anchor="middle">0</text>')
    for s in sig:
        out.append(f'<text x="{px(s):.1f}" y="{B + 12}" text-anchor="middle">{s:g}</text>')
    out.append(f'<text x="{(L + R) / 2}" y="{B + 26}" text-anchor="middle">σ (noise / tensor RMS)</text>')
    for i, name in enumerate(names):
        c = COLORS[i % len(COLORS)]
        ss = sorted(sel[name])
        for idx, dash in ((0, ' stroke-dasharray="4 3"'), (-1, "")):
            pts = " ".join(f"{px(s):.1f},{py(sum(m['rows'][idx]['exact'] for m in sel[name][s]) / len(sel[name][s])):.1f}" for s in ss)
            out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5"{dash} points="{pts}"/>')
        out.append(f'<text x="{R + 10}" y="{T + 12 + 14 * i}" fill="{c}">{name}</text>')
    out.append("</svg>\n")
    return "\n".join(out)


# ---- the supervision table (issue 36): docs/learnability/trace/ ----

TBEGIN, TEND = "<!-- learnability:trace -->", "<!-- /learnability:trace -->"
MBEGIN, MEND = "<!-- learnability:map -->", "<!-- /learnability:map -->"
GOOD = 0.99  # "learned": held-out exact rate ≥ 99 % ...
NEED = (4, 5)  # ... on ≥ 4 of 5 seeds
# Supervision, sparsest first (the experiment labels of
# scripts/learnability_trace.py); controls after.
SUPS = ["no trace", "trace at round boundaries", "trace every level", "trace every level, 2× steps", "trace every level + units",
        "CoT, digest only", "CoT, working every 2 steps", "CoT, working every step"]
CONTROLS = ["constant", "no trace, lr 1e-3", "no trace, lr 1e-2"]
FAMILIES = [("Keccak w=1", "toy Keccak-p[25]"), ("Keccak w=2", "toy Keccak-p[50]"), ("SHA-256", "SHA-256, reduced"), ("adder", "adder n=8")]


def sup_key(exp):
    if exp in SUPS:
        return (0, SUPS.index(exp))
    if exp in CONTROLS:
        return (1, CONTROLS.index(exp))
    return (2, exp)


def rounds_of(inst):
    m = [int(t[2:]) for t in inst.split() if t.startswith("r=") and t[2:].isdigit()]
    return m[0] if m else 1


def family_of(inst):
    for f, _ in FAMILIES:
        if inst.startswith(f):
            return f
    return inst


def student(m):
    s = m["shape"]
    if m["kind"] == "cot":
        return f"GPT L={s['blocks']} d={s['d_model']} h={s['heads']} F={s['ffn']}, {s['tokens']} positions"
    return shape(m)


def supervised(m):
    t = m.get("trace")
    if m["kind"] == "cot":
        return f"{m['working_kept']} of {m['working']} working tokens, {m['digest']} digest"
    if m["init"] == "constant":
        return "–"
    if not t:
        return f"{m['outputs']} output bits"
    u = f" + {t['supervised_units']:,} units" if t.get("supervised_units") else ""
    return f"{t['supervised']:,} values{u} at {len(t['boundaries'])} of {t['blocks'] + 1} boundaries"


def verdict(ms):
    """(seeds ≥ GOOD, seeds run, met: True / False / None undecided)."""
    good = sum(1 for m in ms if m["rows"][-1]["exact"] >= GOOD)
    bad = len(ms) - good
    if good >= NEED[0]:
        return good, len(ms), True
    if bad > NEED[1] - NEED[0]:
        return good, len(ms), False
    return good, len(ms), None


def trace_groups(runs):
    g = {}
    for m in runs:
        g.setdefault((m["instance"], m["experiment"]), []).append(m)
    return sorted(g.items(), key=lambda kv: (inst_key(kv[0][0]), sup_key(kv[0][1])))


def trace_table(runs):
    lines = ["| instance | student shape | supervision | supervised a sample | steps (budget) | held-out exact | seeds ≥ 99 % | bit accuracy (varying bits) | working exact | CPU s |",
             "|---|---|---|---|---|---|---|---|---|---:|"]
    total = 0.0
    for (inst, exp), ms in trace_groups(runs):
        ms = sorted(ms, key=lambda m: m["seed"])
        last = [m["rows"][-1] for m in ms]
        cpu = sum(r["cpu_s"] for r in last)
        total += cpu
        steps = sorted({int(r["step"]) for r in last})
        st = "–" if ms[0]["init"] == "constant" else (f"{steps[0]:,}" if len(steps) == 1 else f"{steps[0]:,}–{steps[-1]:,}") + f" ({ms[0]['steps']:,})"
        good, n, met = verdict(ms)
        mark = {True: " ✓", False: "", None: " (undecided)"}[met] if ms[0]["init"] != "constant" else ""
        wex = [r["working_exact"] for r in last if r.get("working_exact") is not None and not math.isnan(r["working_exact"])]
        lines.append(f"| {inst} | {student(ms[0])} | {exp} | {supervised(ms[0])} | {st} | {span([r['exact'] for r in last])} | "
                     f"{good}/{n}{mark} | {span([r['var_bit_acc'] for r in last])} | {span(wex) if wex else '–'} | {cpu:.0f} |")
    lines.append("")
    lines.append(f"{len(runs)} runs; CPU time of the training processes (the CSVs' `cpu_s`): **{total:.0f} s = {total / 60:.1f} CPU-minutes**.")
    return "\n".join(lines) + "\n"


def learned(runs):
    """{(family, supervision): {rounds: met}} over the non-control cells."""
    out = {}
    for (inst, exp), ms in trace_groups(runs):
        if exp not in SUPS:
            continue
        out.setdefault((family_of(inst), exp), {})[rounds_of(inst)] = verdict(ms)[2]
    return out


def rounds_learned(cells):
    """The largest r such that every round count 1 … r met the criterion."""
    r = 0
    while cells.get(r + 1):
        r += 1
    return r


def map_table(runs):
    lr = learned(runs)
    sups = [s for s in SUPS if any(k[1] == s for k in lr)]
    lines = ["| family | " + " | ".join(sups) + " | sparsest that learns, per instance |",
             "|---|" + "---|" * len(sups) + "---|"]
    for fam, name in FAMILIES:
        if not any(k[0] == fam for k in lr):
            continue
        cells = []
        for s in sups:
            c = lr.get((fam, s))
            if not c:
                cells.append("–")
                continue
            tried = max(c)
            cells.append(f"{rounds_learned(c)} (of {tried} tried)" if fam != "adder" else ("learned" if c.get(1) else "not learned"))
        best = []
        for r in sorted({r for (f, _), c in lr.items() if f == fam for r in c}):
            ok = [s for s in SUPS if lr.get((fam, s), {}).get(r)]
            best.append(f"r={r}: {ok[0] if ok else 'none'}" if fam != "adder" else (ok[0] if ok else "none"))
        lines.append(f"| {name} | " + " | ".join(cells) + " | " + "; ".join(best) + " |")
    return "\n".join(lines) + "\n"


def trace_svg(runs):
    """Rounds learned (≥ 99 % exact on ≥ 4 of 5 seeds, every round count
    up to it) against the supervision, one line a family."""
    lr = learned(runs)
    sups = [s for s in SUPS if any(k[1] == s for k in lr)]
    fams = [f for f, _ in FAMILIES if f != "adder" and any(k[0] == f for k in lr)]
    if not sups or not fams:
        return None
    W, H, L, T, R, B = 700, 330, 50, 30, 520, 250
    out = _svg_open(W, H, "rounds learned (≥ 99 % exact on ≥ 4 of 5 seeds) against the supervision")
    top = 4
    out.append(f'<rect x="{L}" y="{T}" width="{R - L}" height="{B - T}" fill="none" stroke="#999"/>')
    for v in range(top + 1):
        y = B - (B - T) * v / top
        out.append(f'<line x1="{L}" y1="{y:.1f}" x2="{R}" y2="{y:.1f}" stroke="#eee"/><text x="{L - 4}" y="{y + 3:.1f}" text-anchor="end">{v}</text>')
    px = lambda i: L + (R - L) * (i + 0.5) / len(sups)  # noqa: E731
    for i, s in enumerate(sups):
        out.append(f'<text transform="translate({px(i):.1f},{B + 10}) rotate(25)" font-size="9">{s}</text>')
    out.append(f'<text x="{L - 35}" y="{(T + B) / 2}" transform="rotate(-90 {L - 35} {(T + B) / 2})" text-anchor="middle">rounds learned</text>')
    for j, f in enumerate(fams):
        c = COLORS[j % len(COLORS)]
        pts = [(px(i), B - (B - T) * rounds_learned(lr[(f, s)]) / top + 2 * j) for i, s in enumerate(sups) if (f, s) in lr]
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in pts)}"/>')
        for x, y in pts:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{c}"/>')
        out.append(f'<text x="{R + 10}" y="{T + 12 + 14 * j}" fill="{c}">{f}</text>')
    out.append("</svg>\n")
    return "\n".join(out)


def _splice(doc_text, begin, end, body):
    if begin not in doc_text or end not in doc_text:
        raise SystemExit(f"the doc has no {begin} … {end} block")
    head, rest = doc_text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + body + end + tail


def render(runs, doc_text, truns=None):
    doc_text = _splice(doc_text, BEGIN, END, table(runs))
    if truns:
        doc_text = _splice(doc_text, TBEGIN, TEND, trace_table(truns))
        doc_text = _splice(doc_text, MBEGIN, MEND, map_table(truns))
    return doc_text


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", default=os.path.join(ROOT, "docs", "learnability", "runs"))
    p.add_argument("--doc", default=os.path.join(ROOT, "docs", "learnability.md"))
    p.add_argument("--plots", default=os.path.join(ROOT, "docs", "learnability"))
    p.add_argument("--trace-runs", default=os.path.join(ROOT, "docs", "learnability", "trace"))
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    a = p.parse_args(argv)
    runs = load_runs(a.runs)
    if not runs:
        raise SystemExit(f"no runs in {a.runs}")
    with open(a.doc) as f:
        doc = f.read()
    truns = load_runs(a.trace_runs) if os.path.isdir(a.trace_runs) else []
    want = {a.doc: render(runs, doc, truns), os.path.join(a.plots, "scratch.svg"): scratch_svg(runs)}
    b = basin_svg(runs)
    if b:
        want[os.path.join(a.plots, "basin.svg")] = b
    t = trace_svg(truns) if truns else None
    if t:
        want[os.path.join(a.plots, "trace.svg")] = t
    bad = []
    for path, text in want.items():
        if a.write:
            with open(path, "w") as f:
                f.write(text)
            continue
        try:
            with open(path) as f:
                have = f.read()
        except OSError:
            have = None
        if have != text:
            bad.append(path)
    if bad:
        print(f"{', '.join(bad)}: differ from the {len(runs)} runs in {a.runs}; run scripts/learnability_table.py --write", file=sys.stderr)
        return 1
    print(f"{len(runs)} + {len(truns)} runs: {'written' if a.write else 'the tables and plots match'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Where a mapper run's time goes, model by model (issue 37, BENCHMARKS.md).

    bin/tcforge run --progress never --log-level debug --out DIR CONFIG 2> run.log
    python3 scripts/forward_breakdown.py run.log

reads the debug lines of one run (scripts/forward-bench.sh -k keeps them)
and prints a Markdown table with, per model (layerer, architecture): the
Map call (the mapper's own work, and the plugin boundary: encoding,
sending, receiving and decoding the model, both sides), then its forward
passes (float32, probed, float64, the β grid), summed: multiply-adds,
exponentials, stream bytes, wall time, and the time of each kind of kernel
(sparse rows, dense tiles, exp, the rest) beside its floor at the machine's
rates (the "forward pass" lines' *_floor_ms) and the share of that floor
it reached (floor / time; 1 is the machine's rate). The floor line of the
run comes first.
"""
import json
import sys
from collections import OrderedDict


def main(path):
    floor = None
    models = OrderedDict()
    maps = {}  # plugin -> list of (plugin side, host side) Map timings, in order
    order = []
    with open(path) as f:
        for line in f:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            msg = d.get("message", "")
            if msg.startswith("the machine's floor"):
                floor = d
            elif msg == "forward pass":
                key = (d.get("layerer", ""), d.get("arch", ""))
                if key not in models:
                    models[key] = {"passes": [], "map": None}
                models[key]["passes"].append(d)
            elif msg in ("call done", "host call timings") and d.get("call") == "Map":
                maps.setdefault(d["plugin"], []).append((msg, d))
            elif msg == "model verified":
                order.append(d)
    # Map timings: the plugin's "call done" then the host's, per Map call, in
    # the order the models were verified (per plugin).
    seen = {}
    for v in order:
        p = v["mapper"]
        calls = [d for m, d in maps.get(p, []) if m == "call done"]
        hosts = [d for m, d in maps.get(p, []) if m == "host call timings"]
        i = seen.get(p, 0)
        seen[p] = i + 1
        key = (v["layerer"], v["arch"])
        if key not in models:
            models[key] = {"passes": [], "map": None}
        if i < len(calls) and i < len(hosts):
            c, h = calls[i], hosts[i]
            boundary = c["encode"] + c["send"] + c["decode"] + h["encode"] + h["send"] + h["recv"] + h["decode"]
            models[key]["map"] = (v["map_ms"], c["run"] - c["encode"] - c["decode"], boundary, c["out_bytes"])
        models[key]["verify"] = v
    if floor:
        print("floor: %.2e MAC/s sparse in cache, %.2e out of cache, %.2e dense, %.2e exp/s (vectorised; math.Exp %.2e), %.2e B/s stream"
              % (floor["mac_per_s"], floor["mac_mem_per_s"], floor.get("dense_mac_per_s", 0), floor.get("exp_vec_per_s", 0),
                 floor["exp_per_s"], floor.get("bytes_per_s", 0)))
        print()
    print("| layerer | model | Map: mapper / boundary (answer) | passes | MACs | dense MACs | exps | pass time | sparse: time, floor, share | mem: floor, share | dense: time, floor, share | exp: time, floor, share | rest |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|---|---|---|---:|")
    tot = {}
    for (lay, arch), m in models.items():
        ps = m["passes"]
        s = lambda k: sum(p.get(k, 0) for p in ps)
        mp = m["map"]
        mapcol = "–"
        if mp:
            mapcol = "%.1f s / %.1f s (%.0f MB)" % (mp[1] / 1e3, mp[2] / 1e3, mp[3] / 1e6)
            tot["map"] = tot.get("map", 0) + mp[1]
            tot["boundary"] = tot.get("boundary", 0) + mp[2]
        share = lambda fl, t: "%.2f" % (fl / t) if t > 0 else "–"
        sec = lambda ms: "%.1f s" % (ms / 1e3)
        for k in ("pass_ms", "sparse_ms", "dense_ms", "exp_ms", "other_ms", "macs"):
            tot[k] = tot.get(k, 0) + s(k)
        print("| %s | %s | %s | %d | %.2e | %.2e | %.2e | %s | %s, %s, %s | %s, %s | %s, %s, %s | %s, %s, %s | %s |" % (
            lay, arch, mapcol, len(ps), s("macs"), s("dense_macs"), s("exps"), sec(s("pass_ms")),
            sec(s("sparse_ms")), sec(s("sparse_floor_ms")), share(s("sparse_floor_ms"), s("sparse_ms")),
            sec(s("bytes_floor_ms")), share(s("bytes_floor_ms"), s("sparse_ms")),
            sec(s("dense_ms")), sec(s("dense_floor_ms")), share(s("dense_floor_ms"), s("dense_ms")),
            sec(s("exp_ms")), sec(s("exp_floor_ms")), share(s("exp_floor_ms"), s("exp_ms")),
            sec(s("other_ms"))))
    print()
    print("totals: Map %.1f s mapper + %.1f s boundary; passes %.1f s (sparse %.1f s, dense %.1f s, exp %.1f s, rest %.1f s), %.2e MACs"
          % (tot.get("map", 0) / 1e3, tot.get("boundary", 0) / 1e3, tot.get("pass_ms", 0) / 1e3, tot.get("sparse_ms", 0) / 1e3,
             tot.get("dense_ms", 0) / 1e3, tot.get("exp_ms", 0) / 1e3, tot.get("other_ms", 0) / 1e3, tot.get("macs", 0)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: forward_breakdown.py RUN.LOG", file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])

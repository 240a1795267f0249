#!/usr/bin/python3
"""Print the figures of today's Reifier compile_keccak for the instances
tcforge's reifier mode = "current" is pinned to.

Usage: /usr/bin/python3 scripts/reifier_figures.py REIFIER_SRC [log_w:rounds:capacity ...]

REIFIER_SRC is the src/ folder of a checkout of github.com/contramont/reifier
(needs numpy; Debian's python3-numpy will do). Without instances it prints
the ones plugins/reifier/current_test.go pins. One line per instance:

    log_w rounds capacity depth width gates edges widths

with tcforge's conventions: depth counts gate levels (Reifier's
n_gate_levels), width is the widest gate level, gates are all gates (the
input level is not counted), edges all edges; widths are the gate levels'
widths, comma-separated.
"""

import sys

PINNED = ["6:24:448", "6:24:512", "0:3:12", "1:2:25", "2:5:50", "3:4:100",
          "4:6:200", "5:7:400", "2:13:50"]


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.path.insert(0, sys.argv[1])
    from reifier.examples.keccak import Keccak
    from reifier.examples.keccak_compile import compile_keccak

    for spec in sys.argv[2:] or PINNED:
        log_w, rounds, capacity = (int(v) for v in spec.split(":"))
        k = Keccak(log_w=log_w, n=rounds, c=capacity, pad_char="_")
        a = compile_keccak(k)
        gates = a.level_sizes[1:]
        print(log_w, rounds, capacity, a.n_gate_levels, max(gates), sum(gates), a.n_edges,
              ",".join(str(g) for g in gates))


if __name__ == "__main__":
    main()

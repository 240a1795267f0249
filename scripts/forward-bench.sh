#!/bin/sh
# The forward pass against the previous binary (issue 37, BENCHMARKS.md):
# whole runs of mapper configs, two binaries in interleaved rounds, with
# the load beside every run:
#
#   scripts/forward-bench.sh [-n ROUNDS] [-k DIR] OLD_BIN NEW_BIN [CONFIG...]
#
# CONFIG defaults to configs/bench/mappers-sha3-256.hcl (the full SHA3-256
# pipeline: both layerers, the four mappers, 64 samples, the float32 and
# float64 passes). Each round (default 1) runs every CONFIG with both
# binaries, the old one first in odd rounds and the new one first in even
# rounds, as
#
#   BIN run --progress never --log-level debug --out DIR/… CONFIG
#
# and prints one line per run: round, binary, config, wall s, CPU s (user +
# sys of the host and its plugin processes), peak RSS of the largest
# process (MB), and the 1-minute load average before and after. Then, per
# config, the medians of each binary, the ratio new/old, and the range of
# the load. -k DIR keeps every run's output directory (its CSV: compare
# with scripts/cmpconfigs.sh's rules, or diff) and debug log (the
# "forward pass" lines: per pass its work, time by kernel, and the share of
# the machine's floor; "model verified": map_ms, the plugin boundary and
# the mapper) in DIR; without -k they go to a temporary directory, removed
# at the end. Run it from the repository root. Exit status: 0; 1 if a run
# failed; 2 on usage.
set -eu
rounds=1
keep=""
while getopts n:k: o; do
	case $o in
	n) rounds=$OPTARG ;;
	k) keep=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || {
	echo "usage: $0 [-n ROUNDS] [-k DIR] OLD_BIN NEW_BIN [CONFIG...]" >&2
	exit 2
}
old=$1
new=$2
shift 2
[ $# -gt 0 ] || set -- configs/bench/mappers-sha3-256.hcl
for b in "$old" "$new"; do
	[ -x "$b" ] || {
		echo "$0: $b: not an executable" >&2
		exit 2
	}
done
for c in "$@"; do
	[ -f "$c" ] || {
		echo "$0: $c: no such config (run it from the repository root)" >&2
		exit 2
	}
done
if [ -n "$keep" ]; then
	dir=$keep
	mkdir -p "$dir"
else
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi
lines=$dir/runs.txt
: >"$lines"
failed=0

# one TAG BIN CONFIG ROUND: one run, one line.
one() {
	name=$(basename "$3" .hcl)
	out=$dir/$1-$name-$4
	rm -rf "$out"
	l0=$(cut -d' ' -f1 /proc/loadavg)
	# %e wall s, %U user s, %S sys s, %M max RSS KiB (of the largest process)
	if ! /usr/bin/time -f '%e %U %S %M' -o "$out.time" "$2" run --progress never --log-level debug --out "$out" "$3" >/dev/null 2>"$out.log"; then
		echo "$0: $2 run $3 failed (log: $out.log)" >&2
		failed=1
	fi
	l1=$(cut -d' ' -f1 /proc/loadavg)
	tail -n 1 "$out.time" | awk -v r="$4" -v t="$1" -v c="$name" -v l0="$l0" -v l1="$l1" \
		'{ printf "%d %s %s %.2f %.2f %.0f %s %s\n", r, t, c, $1, $2 + $3, $4 / 1024, l0, l1 }' | tee -a "$lines"
}

echo "round bin config wall_s cpu_s peak_rss_mb load_before load_after"
r=1
while [ "$r" -le "$rounds" ]; do
	for c in "$@"; do
		if [ $((r % 2)) = 1 ]; then
			one old "$old" "$c" "$r"
			one new "$new" "$c" "$r"
		else
			one new "$new" "$c" "$r"
			one old "$old" "$c" "$r"
		fi
	done
	r=$((r + 1))
done

echo
echo "medians of $rounds rounds (new / old):"
for c in "$@"; do
	awk -v c="$(basename "$c" .hcl)" '
	function median(a, n,   i, k, t) {
		for (i = 2; i <= n; i++) { t = a[i]; for (k = i - 1; k >= 1 && a[k] > t; k--) a[k + 1] = a[k]; a[k + 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	$3 == c {
		if ($2 == "old") { no++; ow[no] = $4; oc[no] = $5 } else { nn++; nw[nn] = $4; nc[nn] = $5 }
		for (i = 7; i <= 8; i++) {
			if (lo == "" || $i < lo) lo = $i
			if (hi == "" || $i > hi) hi = $i
		}
	}
	END {
		mow = median(ow, no); mnw = median(nw, nn); moc = median(oc, no); mnc = median(nc, nn)
		printf "%s: wall %.1f s / %.1f s = %.2fx; cpu %.1f s / %.1f s = %.2fx; load %s-%s\n", c, mnw, mow, (mow > 0 ? mnw / mow : 0), mnc, moc, (moc > 0 ? mnc / moc : 0), lo, hi
	}' "$lines"
done
[ -z "$keep" ] || echo "runs, outputs and debug logs: $dir"
exit "$failed"

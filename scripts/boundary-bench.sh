#!/bin/sh
# The plugin boundary's cost (issue 28): tcforge run over RPC against
# --in-process, for the README's main job and one SHA3-256 point, in
# interleaved rounds, with medians and ratios (BENCHMARKS.md):
#
#   scripts/boundary-bench.sh [-n ROUNDS] [-k] BIN [BIN...]
#
# Per round (default 7), for each BIN in turn, it runs
#
#   BIN run [--in-process] --progress never --log-level warn CONFIG...
#
# for both jobs, over RPC then --in-process:
#   main  configs/paper/keccak.hcl configs/paper/md.hcl configs/paper/merkle.hcl
#   sha3  configs/bench/sha3-256.hcl
# and prints one line per run (wall s; CPU s, user + sys of the host and
# its plugin processes; the 1-minute load average just before the run),
# then, per BIN and job, the medians of the RPC and --in-process runs
# (wall and CPU), the ratio of the medians, the median of the rounds'
# ratios (each round's RPC run over the same round's --in-process run),
# and the range of the load averages. Several BINs (an old commit's binary
# and a new one) run in the same rounds, so that a shared machine's load
# falls on all of them alike. Binary paths must not contain spaces.
#
# -k keeps the file of per-run lines (its path is printed). Run it from the
# repository root. Exit status: 0; 1 if a run failed; 2 on usage.
set -eu
rounds=7
keep=0
while getopts n:k o; do
	case $o in
	n) rounds=$OPTARG ;;
	k) keep=1 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || {
	echo "usage: $0 [-n ROUNDS] [-k] BIN [BIN...]" >&2
	exit 2
}
for b in "$@"; do
	[ -x "$b" ] || {
		echo "$0: $b: not an executable" >&2
		exit 2
	}
done
[ -f configs/bench/sha3-256.hcl ] || {
	echo "$0: run it from the repository root" >&2
	exit 2
}
main="configs/paper/keccak.hcl configs/paper/md.hcl configs/paper/merkle.hcl"
sha3="configs/bench/sha3-256.hcl"
lines=$(mktemp)
tm=$(mktemp)
if [ "$keep" = 1 ]; then
	trap 'rm -f "$tm"' EXIT
else
	trap 'rm -f "$lines" "$tm"' EXIT
fi
failed=0

# one BIN MODE JOB ROUND: one run, one line "round bin mode job wall cpu load".
one() {
	flag=""
	[ "$2" = rpc ] || flag=--in-process
	cfgs=$main
	[ "$3" = main ] || cfgs=$sha3
	load=$(cut -d' ' -f1 /proc/loadavg)
	# shellcheck disable=SC2086 # flag and cfgs are word lists
	if ! python3 -c "$timer" "$tm" "$1" run $flag --progress never --log-level warn $cfgs; then
		echo "$0: $1 run $flag $cfgs failed" >&2
		failed=1
	fi
	tail -n 1 "$tm" | awk -v r="$4" -v b="$1" -v m="$2" -v j="$3" -v l="$load" \
		'{ printf "%d %s %s %s %.4f %.4f %s\n", r, b, m, j, $1, $2 + $3, l }' | tee -a "$lines"
}

# timer runs a command (argv[2:]) and writes "wall user sys" to argv[1]:
# wall from just before the start to the end, in the timer's clock; user
# and sys of the process and the children it waited for (the plugin
# processes), from wait4, to the microsecond (GNU time gives 10 ms, too
# coarse for runs of 0.1 s). Exit status: the command's, 0 or 1.
timer='
import os, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
wall = time.perf_counter() - t0
with open(sys.argv[1], "w") as f:
    f.write("%.6f %.6f %.6f\n" % (wall, ru.ru_utime, ru.ru_stime))
sys.exit(0 if status == 0 else 1)
'

echo "round bin mode job wall_s cpu_s load1"
r=1
while [ "$r" -le "$rounds" ]; do
	for b in "$@"; do
		for job in main sha3; do
			one "$b" rpc "$job" "$r"
			one "$b" in-process "$job" "$r"
		done
	done
	r=$((r + 1))
done

echo
echo "medians of $rounds rounds (RPC / --in-process):"
for b in "$@"; do
	for job in main sha3; do
		awk -v b="$b" -v j="$job" '
		function median(a, n,   i, k, t) {
			for (i = 2; i <= n; i++) { t = a[i]; for (k = i - 1; k >= 1 && a[k] > t; k--) a[k + 1] = a[k]; a[k + 1] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		$2 == b && $4 == j {
			if ($3 == "rpc") { nr++; rw[nr] = $5; rc[nr] = $6; byr[$1] = $5 } else { ni++; iw[ni] = $5; ic[ni] = $6; byi[$1] = $5 }
			if (lo == "" || $7 < lo) lo = $7
			if (hi == "" || $7 > hi) hi = $7
		}
		END {
			for (k in byr) if (k in byi && byi[k] > 0) { np++; pr[np] = byr[k] / byi[k] }
			mrw = median(rw, nr); miw = median(iw, ni); mrc = median(rc, nr); mic = median(ic, ni)
			wr = 0; cr = 0; pm = 0
			if (miw > 0) wr = mrw / miw
			if (mic > 0) cr = mrc / mic
			if (np > 0) pm = median(pr, np)
			printf "%s %s: wall %.3f s / %.3f s = %.2fx (rounds %.2fx); cpu %.3f s / %.3f s = %.2fx; load %s-%s\n", b, j, mrw, miw, wr, pm, mrc, mic, cr, lo, hi
		}' "$lines"
	done
done
[ "$keep" = 0 ] || echo "per-run lines: $lines"
exit "$failed"

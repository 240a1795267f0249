#!/bin/sh
# Whole-process timings of configs/bench/ runs in Go benchmark format, for
# benchstat (BENCHMARKS.md):
#
#   scripts/benchruns.sh [-n COUNT] [-x "EXTRA RUN FLAGS"] BIN CONFIG... > runs.txt
#
# runs `BIN run --progress never --out TMP EXTRA CONFIG` COUNT times (default
# 5) per config, interleaving the configs (round 1 of every config, then
# round 2 …) so that a shared machine's load falls on all of them alike, and
# prints one line per run:
#
#   BenchmarkRun/<config> 1 <wall ns> ns/op <user+sys ns> cpu-ns/op <max RSS bytes> peak-rss-B/op
#
# Compare two binaries with: benchstat old.txt new.txt
# (go run golang.org/x/perf/cmd/benchstat@latest).
set -eu
count=5
extra=""
while getopts n:x: o; do
	case $o in
	n) count=$OPTARG ;;
	x) extra=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: $0 [-n COUNT] [-x FLAGS] BIN CONFIG..." >&2; exit 2; }
bin=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "goos: $(go env GOOS)"
echo "goarch: $(go env GOARCH)"
echo "pkg: tcforge/configs/bench"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
i=0
while [ "$i" -lt "$count" ]; do
	for cfg in "$@"; do
		name=$(basename "$cfg" .hcl)
		# %e wall s, %U user s, %S sys s, %M max RSS KiB
		/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$bin" run --progress never --log-level warn --out "$tmp/out" $extra "$cfg" >/dev/null 2>"$tmp/err" ||
			{ echo "$cfg failed:" >&2; tail -5 "$tmp/err" >&2; exit 1; }
		awk -v n="$name" '{ printf "BenchmarkRun/%s 1 %.0f ns/op %.0f cpu-ns/op %.0f peak-rss-B/op\n", n, $1*1e9, ($2+$3)*1e9, $4*1024 }' "$tmp/time"
	done
	i=$((i + 1))
done

#!/bin/sh
# Wall and CPU time of the test tiers (README "Development", BENCHMARKS.md
# "Issue 24: test tiers"):
#
#   scripts/tiers-bench.sh [-c] [-n N] [TIER...]
#
# TIER is short (go test -short ./...) or ci (go test ./...); default both.
# Each runs `go test [-short] -count=1 -json ./...` in the current module
# and prints, per tier: wall and CPU time (user + sys of go test and
# everything it waited for: compiles, links, test binaries, the plugin and
# python processes they start), the 1-minute load average at start and
# end, the pass/fail result, the CPU and wall of each test binary (through
# go test -exec, so without compiling and linking; sorted by CPU, N rows),
# and the N slowest top-level tests by go test's Elapsed (default N 10).
# -c: cold: an empty GOCACHE of its own (removed afterwards), so every
# package and test binary is compiled; without -c the build cache is the
# usual one (warm once it has been built; tests are never cached).
# TIERS_KEEP=DIR keeps each tier's go test -json output and per-binary times
# there (TIER.json, TIER.bins). Needs GNU time at /usr/bin/time and awk.
set -eu
cold=0
n=10
while getopts cn: o; do
	case $o in
	c) cold=1 ;;
	n) n=$OPTARG ;;
	*) echo "usage: $0 [-c] [-n N] [short|ci]..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- short ci
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# The -exec wrapper: runs one test binary under GNU time, appending
# "user sys wall package-dir" to $TIERS_LOG.
cat >"$tmp/exec.sh" <<'EOF'
#!/bin/sh
exec /usr/bin/time -a -o "$TIERS_LOG" -f "%U %S %e $(pwd)" "$@"
EOF
chmod +x "$tmp/exec.sh"
load() { cut -d' ' -f1 /proc/loadavg; }
for tier in "$@"; do
	case $tier in
	short) flags=-short ;;
	ci) flags= ;;
	*) echo "unknown tier $tier (short or ci)" >&2; exit 2 ;;
	esac
	if [ $cold = 1 ]; then
		GOCACHE=$tmp/gocache
		export GOCACHE
		rm -rf "$GOCACHE"
		mkdir -p "$GOCACHE"
	fi
	TIERS_LOG=$tmp/$tier.bins
	export TIERS_LOG
	: >"$TIERS_LOG"
	l0=$(load)
	rc=0
	# shellcheck disable=SC2086 # flags is one flag or none
	/usr/bin/time -o "$tmp/$tier.time" -f "%e %U %S" \
		go test $flags -count=1 -json -exec "$tmp/exec.sh" ./... >"$tmp/$tier.json" 2>"$tmp/$tier.err" || rc=$?
	l1=$(load)
	set -- $(tail -n 1 "$tmp/$tier.time")
	if [ $rc = 0 ]; then res=pass; else res="FAIL (exit $rc)"; fi
	echo "== go test $flags ./...$( [ $cold = 1 ] && echo ' (cold: empty GOCACHE)' || echo ' (warm)'): $res"
	awk -v w="$1" -v u="$2" -v s="$3" -v l0="$l0" -v l1="$l1" 'BEGIN {
		printf "wall %.1f s, CPU %.1f s (user %.1f + sys %.1f), load %s -> %s\n", w, u + s, u, s, l0, l1 }'
	awk -v n="$n" -v root="$(pwd)/" '{
		d = $4; sub(root, "", d); if (d == $4) d = "."
		c[d] += $1 + $2; w[d] += $3; tc += $1 + $2
	} END {
		printf "test binaries: %.1f s CPU in all; by CPU (s CPU, s wall, package):\n", tc
		for (d in c) printf "%8.1f %8.1f  %s\n", c[d], w[d], d | "sort -rn | head -n " n
	}' "$TIERS_LOG"
	echo "slowest tests (s, by go test -json Elapsed; top-level tests):"
	awk -v n="$n" '
	/"Action":"(pass|fail|skip)"/ && /"Test":"[^"\/]*"/ {
		match($0, /"Package":"[^"]*"/); p = substr($0, RSTART + 11, RLENGTH - 12)
		match($0, /"Test":"[^"]*"/); t = substr($0, RSTART + 8, RLENGTH - 9)
		match($0, /"Elapsed":[0-9.]+/); e = substr($0, RSTART + 10, RLENGTH - 10)
		a = $0; sub(/.*"Action":"/, "", a); sub(/".*/, "", a)
		printf "%8.2f  %s %s%s\n", e, p, t, (a == "pass" ? "" : " (" a ")")
	}' "$tmp/$tier.json" | sort -rn | head -n "$n"
	if [ -n "${TIERS_KEEP:-}" ]; then
		mkdir -p "$TIERS_KEEP"
		cp "$tmp/$tier.json" "$tmp/$tier.bins" "$TIERS_KEEP/"
	fi
	if [ $rc != 0 ]; then
		echo "failures:"
		grep -E '"Action":"fail"' "$tmp/$tier.json" | sed -E 's/.*"Package":"([^"]*)".*"Test":"([^"]*)".*/  \1 \2/' | head -n 20
		tail -n 20 "$tmp/$tier.err"
	fi
done

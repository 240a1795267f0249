#!/bin/sh
# Behaviour-unchanged evidence: run configs with two tcforge binaries and
# compare their CSVs column by column, times aside.
#
#   scripts/cmpconfigs.sh OLD_BIN NEW_BIN [CONFIG...]
#
# For each CONFIG (default: configs/*.hcl and configs/paper/*.hcl, less the
# slow ones listed below) it runs
#
#   nice -n 10 BIN run --progress never --out DIR/{old,new}/<config> CONFIG
#
# with OLD_BIN, then NEW_BIN (one after the other, never both at once), and
# compares every <pipeline>.csv of the two output directories: rows are
# matched by their key (the matrix variables, layerer, and mapper and arch
# where the pipeline has mappers; a repeated key by its occurrence), then
# every column both CSVs have is compared except the time columns
# (layer_ms, time_vs_<layerer>, and any column named *_ms or *_seconds). It
# prints, per config, "identical" or what differs: a pipeline or column
# only one binary wrote, a row only one has, and each differing cell as
#   <pipeline> row <key>: <column> OLD -> NEW
# (at most CMPCONFIGS_MAX_DIFFS cells per pipeline, default 40), plus a
# binary's non-zero exit status.
#
# Slow configs (minutes, or gigabytes) are skipped by default and listed;
# name them, or set CMPCONFIGS_ALL=1, to run them:
#   configs/mappers.hcl        ~15 min, 4.4 GB
#   configs/model-frontier.hcl ~5 min, 1.6 GB
#   configs/frontier.hcl       2-3 min, 7.2 GB
#   configs/sha2-mappers.hcl   minutes (a 300,000-token model per mapper)
#
# The configs are always this checkout's files (both binaries read the same
# input). Outputs go to a temporary directory, removed at the end unless
# CMPCONFIGS_OUT=DIR names where to keep them. Extra `run` flags for both
# binaries: CMPCONFIGS_FLAGS (e.g. "--jobs 1"); for one of them:
# CMPCONFIGS_OLD_FLAGS, CMPCONFIGS_NEW_FLAGS. configs/learnability.hcl and
# configs/examples/ read the example adder plugin, an external one: build
# it from each tree and pass its directory, e.g.
#   go build -o /tmp/old-plugins/tcforge-plugin-adder ./plugins/adder/cmd/tcforge-plugin-adder
#   CMPCONFIGS_OLD_FLAGS="--plugin-dir /tmp/old-plugins" ...
#
# Exit status: 0 every config identical; 1 some config differs or a binary
# failed; 2 usage.
set -eu

slow="configs/mappers.hcl configs/model-frontier.hcl configs/frontier.hcl configs/sha2-mappers.hcl"

[ $# -ge 2 ] || {
	echo "usage: $0 OLD_BIN NEW_BIN [CONFIG...]" >&2
	exit 2
}
old=$1
new=$2
shift 2
for b in "$old" "$new"; do
	[ -x "$b" ] || {
		echo "$0: $b: not an executable" >&2
		exit 2
	}
done

if [ $# -eq 0 ]; then
	skipped=""
	for c in configs/*.hcl configs/paper/*.hcl; do
		case " $slow " in
		*" $c "*)
			if [ "${CMPCONFIGS_ALL:-}" = 1 ]; then
				set -- "$@" "$c"
			else
				skipped="$skipped $c"
			fi
			;;
		*) set -- "$@" "$c" ;;
		esac
	done
	[ -z "$skipped" ] || echo "skipped (slow; name them or set CMPCONFIGS_ALL=1):$skipped"
fi

if [ -n "${CMPCONFIGS_OUT:-}" ]; then
	out=$CMPCONFIGS_OUT
	mkdir -p "$out"
else
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi

status=0
for c in "$@"; do
	[ -f "$c" ] || {
		echo "== $c: no such file"
		status=1
		continue
	}
	name=$(echo "$c" | sed 's|^configs/||; s|\.hcl$||; s|/|_|g')
	rcs=""
	for side in old new; do
		if [ $side = old ]; then
			bin=$old
			flags=${CMPCONFIGS_OLD_FLAGS:-}
		else
			bin=$new
			flags=${CMPCONFIGS_NEW_FLAGS:-}
		fi
		dir=$out/$side/$name
		rm -rf "$dir"
		mkdir -p "$dir"
		start=$(date +%s)
		rc=0
		# shellcheck disable=SC2086 # the flags are split on purpose
		nice -n 10 "$bin" run --progress never --out "$dir" ${CMPCONFIGS_FLAGS:-} $flags "$c" \
			>"$dir.log" 2>&1 || rc=$?
		rcs="$rcs $side=$rc,$(($(date +%s) - start))s"
	done
	echo "== $c (exit status, wall:$rcs)"
	for side in old new; do
		rc=$(echo "$rcs" | sed "s/.*$side=\([0-9]*\),.*/\1/")
		if [ "$rc" != 0 ]; then
			echo "  $side binary exited $rc; last lines of $side/$name.log:"
			tail -n 3 "$out/$side/$name.log" | sed 's/^/    /'
			status=1
		fi
	done
	python3 - "$out/old/$name" "$out/new/$name" "${CMPCONFIGS_MAX_DIFFS:-40}" <<'EOF' || status=1
import csv, os, re, sys
from collections import Counter

olddir, newdir, maxdiffs = sys.argv[1], sys.argv[2], int(sys.argv[3])
timecol = re.compile(r"^(layer_ms|time_vs_.*|.*_ms|.*_seconds)$")

def csvs(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".csv")) if os.path.isdir(d) else []

def load(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return [], {}
    head, body = rows[0], rows[1:]
    # Key columns: everything up to layerer (the matrix variables), and the
    # model's mapper and arch.
    keycols = head[: head.index("layerer") + 1] if "layerer" in head else []
    keycols += [c for c in ("mapper", "arch") if c in head]
    idx = [head.index(c) for c in keycols]
    seen, out = Counter(), {}
    for r in body:
        k = tuple(r[i] if i < len(r) else "" for i in idx)
        seen[k] += 1
        key = ",".join(f"{c}={v}" for c, v in zip(keycols, k) if v != "")
        if seen[k] > 1:
            key += f" (#{seen[k]})"
        out[key] = dict(zip(head, r))
    return head, out

diffs = []
o, n = csvs(olddir), csvs(newdir)
for f in sorted(set(o) | set(n)):
    p = f[:-4]
    if f not in n:
        diffs.append(f"{p}: only the old binary wrote it")
        continue
    if f not in o:
        diffs.append(f"{p}: only the new binary wrote it")
        continue
    oh, orows = load(os.path.join(olddir, f))
    nh, nrows = load(os.path.join(newdir, f))
    for c in oh:
        if c not in nh:
            diffs.append(f"{p}: column {c} only in old")
    for c in nh:
        if c not in oh:
            diffs.append(f"{p}: column {c} only in new")
    cols = [c for c in oh if c in nh and not timecol.match(c)]
    cells = 0
    for k in orows:
        if k not in nrows:
            diffs.append(f"{p}: row {k} only in old")
    for k in nrows:
        if k not in orows:
            diffs.append(f"{p}: row {k} only in new")
    for k, orow in orows.items():
        nrow = nrows.get(k)
        if nrow is None:
            continue
        for c in cols:
            a, b = orow.get(c, ""), nrow.get(c, "")
            if a != b:
                cells += 1
                if cells <= maxdiffs:
                    diffs.append(f"{p} row {k}: {c} {a!r} -> {b!r}")
    if cells > maxdiffs:
        diffs.append(f"{p}: ... {cells - maxdiffs} more differing cells ({cells} in all)")
if not o and not n:
    print("  no CSV written by either binary")
    sys.exit(1)
if diffs:
    for d in diffs:
        print("  " + d)
    sys.exit(1)
rows = sum(len(load(os.path.join(olddir, f))[1]) for f in o)
print(f"  identical ({len(o)} CSVs, {rows} rows)")
EOF
done
exit $status

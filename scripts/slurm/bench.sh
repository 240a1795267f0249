#!/usr/bin/env bash
# The scheduler's overhead on one machine: the wall time of a sweep as one
# `tcforge run` and as an N-task Slurm array (`tcforge slurm`, its merge
# job included, submission to the merge job's end), interleaved ROUNDS
# times (A B A B …) on the scheduler $SLURM_CONF names (scripts/slurm/start.sh),
# with the load average beside each figure, the array's tasks' own run
# time (Slurm's start and end of each) and a check that the merged CSVs
# equal the single run's apart from times (docs/clusters.md).
#
#   scripts/slurm/bench.sh [-n ROUNDS] [-N TASKS] [-m MEM_MIB] BIN CONFIG
set -euo pipefail
rounds=2 tasks=8 mem=2048
while getopts n:N:m: o; do
	case $o in
	n) rounds=$OPTARG ;;
	N) tasks=$OPTARG ;;
	m) mem=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: $0 [-n ROUNDS] [-N TASKS] [-m MEM_MIB] BIN CONFIG" >&2; exit 2; }
bin=$(realpath "$1") cfg=$2
: "${SLURM_CONF:?set SLURM_CONF (scripts/slurm/start.sh prints it)}"
tmp=$(mktemp -d /tmp/tcforge-slurm-bench.XXXXXX)
load() { cut -d' ' -f1 /proc/loadavg; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
echo "$(nproc) CPUs; Slurm: $(sinfo -h -o '%c CPUs, %m MiB' -n localhost); $bin; $cfg; $tasks tasks of 1 CPU, $mem MiB"
for r in $(seq "$rounds"); do
	l0=$(load) t0=$(now)
	"$bin" run --progress never --log-level warn --out "$tmp/single-$r" "$cfg" >/dev/null
	t1=$(now)
	echo "round $r: tcforge run: $(secs "$t0" "$t1") s (load $l0 → $(load))"

	dir=$tmp/sweep-$r l0=$(load) t0=$(now)
	"$bin" slurm --dir "$dir" --shards "$tasks" --time 120m --mem "$mem" "$cfg" >/dev/null
	ids=$(grep -o '"\(array\|merge\|report\)": "[0-9]*"' "$dir/tcforge-slurm.json" | grep -o '[0-9]*' | paste -sd,)
	array=${ids%%,*} merge=$(echo "$ids" | cut -d, -f2)
	while squeue -h -o %F | grep -qxE "$(echo "$ids" | tr , '|')"; do sleep 0.2; done
	t1=$(now)
	state=$(scontrol -o show job "$merge" | grep -o 'JobState=[A-Z]*')
	# The tasks' own run time, as Slurm saw it, and the span from the
	# first start to the last end.
	own=$(scontrol -o show job "$array" | grep -o 'StartTime=[^ ]* EndTime=[^ ]*' |
		sed 's/StartTime=//; s/EndTime=//' | while read -r s e; do echo "$(date -d "$s" +%s) $(date -d "$e" +%s)"; done |
		awk 'NR == 1 || $1 < lo { lo = $1 } $2 > hi { hi = $2 } { sum += $2 - $1 } END { printf "%d s of task time, tasks from first start to last end %d s", sum, hi - lo }')
	echo "round $r: tcforge slurm, $tasks tasks + merge: $(secs "$t0" "$t1") s (load $l0 → $(load)); merge job $state; $own"
	for f in "$tmp/single-$r"/*.csv; do
		# Every column but the times (layer_ms, time_vs_reifier).
		strip() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /_ms$|^time_/) skip[i] = 1 } { s = ""; for (i = 1; i <= NF; i++) if (!skip[i]) s = s $i ","; print s }' "$1"; }
		cmp -s <(strip "$f") <(strip "$dir/out/$(basename "$f")") || echo "round $r: $(basename "$f") differs between the run and the merge"
	done
done
rm -rf "$tmp"

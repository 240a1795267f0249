#!/usr/bin/env bash
# Stop the scheduler scripts/slurm/start.sh started from DIR: cancel every
# job still queued or running on it (each task gets SIGTERM, then SIGKILL
# after KillWait), wait for them to end, then stop slurmd, slurmctld and
# munged, each by its PID file in DIR.
#
#   scripts/slurm/stop.sh [DIR]    # default /tmp/tcforge-slurm
set -uo pipefail
DIR=${1:-${TCFORGE_SLURM_DIR:-/tmp/tcforge-slurm}}
export SLURM_CONF=$DIR/slurm.conf
if [ -f "$DIR/slurmctld.pid" ] && kill -0 "$(cat "$DIR/slurmctld.pid")" 2>/dev/null; then
	left() { squeue -h -o %F 2>/dev/null | sort -u; } # array job ids (scancel refuses a task's own id)
	jobs=$(left)
	if [ -n "$jobs" ]; then
		# shellcheck disable=SC2086 # one word a job
		scancel $jobs
		wait=$(awk -F= '/^KillWait=/ {print $2}' "$SLURM_CONF")
		for _ in $(seq $(((${wait:-30} + 10) * 5))); do
			[ -z "$(left)" ] && break
			sleep 0.2
		done
		jobs=$(left)
		if [ -n "$jobs" ]; then
			echo "stop.sh: jobs $jobs still there after KillWait; SIGKILL to every process of them" >&2
			# shellcheck disable=SC2086
			scancel --full --signal=KILL $jobs
			sleep 2
		fi
	fi
fi
for pidfile in "$DIR/slurmd.pid" "$DIR/slurmctld.pid" "$DIR/munge/munged.pid"; do
	[ -f "$pidfile" ] || continue
	pid=$(cat "$pidfile")
	kill "$pid" 2>/dev/null || continue
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
done

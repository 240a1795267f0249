#!/usr/bin/env bash
# Start a single-node Slurm (munged, slurmctld, slurmd) on 127.0.0.1 for
# trying `tcforge slurm` on one machine — a laptop, a CI runner — without
# systemd and without touching /etc: every file lives in DIR.
#
#   scripts/slurm/start.sh [DIR]    # default /tmp/tcforge-slurm
#   export SLURM_CONF=DIR/slurm.conf   # what the script prints; then sbatch, squeue, tcforge slurm
#   scripts/slurm/stop.sh [DIR]     # stops the daemons, cancels nothing else
#
# Needs Debian's slurm-wlm and munge packages (Slurm 22.05 on Debian 12:
# apt-get install slurm-wlm munge) and root: slurmd starts each task as
# the user who submitted it. The environment sets the node and the
# limits (defaults in brackets):
#   SLURM_CPUS        CPUs the node offers [nproc]
#   SLURM_MEMORY_MIB  memory the node offers, MiB [90 % of MemTotal]
#   SLURM_KILLWAIT    seconds between SIGTERM and SIGKILL at a time limit
#                     or scancel [30, Slurm's default]
#   SLURM_PORT        slurmctld's port; slurmd takes the next [6817]
# It waits until the node is idle (at most 30 s) and exits non-zero,
# with the daemons' logs, if it is not.
set -euo pipefail
DIR=${1:-${TCFORGE_SLURM_DIR:-/tmp/tcforge-slurm}}
CPUS=${SLURM_CPUS:-$(nproc)}
MEM=${SLURM_MEMORY_MIB:-$(awk '/^MemTotal:/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)}
KILLWAIT=${SLURM_KILLWAIT:-30}
PORT=${SLURM_PORT:-6817}
for cmd in munged slurmctld slurmd sbatch scontrol sinfo; do
	command -v "$cmd" >/dev/null || { echo "start.sh: $cmd not found: apt-get install slurm-wlm munge" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "start.sh: slurmd must run as root (it starts each task as its user)" >&2; exit 1; }
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
if [ -f "$DIR/slurmctld.pid" ] && kill -0 "$(cat "$DIR/slurmctld.pid")" 2>/dev/null; then
	echo "start.sh: a scheduler already runs from $DIR (scripts/slurm/stop.sh $DIR first)" >&2
	exit 1
fi
mkdir -p "$DIR/state" "$DIR/spool" "$DIR/munge"
chmod 700 "$DIR/munge"
[ -f "$DIR/munge/munge.key" ] || { dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none; chmod 400 "$DIR/munge/munge.key"; }
user=$(id -un)
cat >"$DIR/slurm.conf" <<CONF
# Written by scripts/slurm/start.sh: one node, 127.0.0.1, no accounting.
ClusterName=tcforge
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
# No cgroups (containers, laptops without delegation): tasks are found by
# their process tree, and signals reach every process of it.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# Completed jobs' states, for tcforge slurm status after scontrol forgets them.
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/jobcomp.log
MinJobAge=600
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# A task that asks for no memory gets a CPU's share of the node, not all of it.
DefMemPerCPU=$((MEM / CPUS))
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
KillWait=$KILLWAIT
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
echo "SLURM_CONF=$DIR/slurm.conf" >"$DIR/env"
export SLURM_CONF=$DIR/slurm.conf
munged --socket="$DIR/munge/munge.socket" --key-file="$DIR/munge/munge.key" \
	--pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed" --force
slurmctld -f "$DIR/slurm.conf"
slurmd -f "$DIR/slurm.conf"
for _ in $(seq 60); do
	state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
	[ "$state" = idle ] && break
	sleep 0.5
done
if [ "$state" != idle ]; then
	echo "start.sh: the node is not idle after 30 s (state: ${state:-none}); logs:" >&2
	tail -n 20 "$DIR/slurmctld.log" "$DIR/slurmd.log" >&2 || true
	exit 1
fi
echo "Slurm $(sinfo -V | cut -d' ' -f2) up: one node, $CPUS CPUs, $MEM MiB, KillWait $KILLWAIT s"
echo "export SLURM_CONF=$DIR/slurm.conf"

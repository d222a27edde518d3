#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the batch test: `slurm-cluster.sh start DIR`
# starts munged, slurmctld and slurmd with their state, logs and pids under DIR (run as root);
# `slurm-cluster.sh stop DIR` stops them by their pids. slurm.conf names this host with its
# CPUs and memory, tracks processes by /proc (no cgroups needed) and keeps no accounting.
set -euo pipefail
command=${1:?usage: slurm-cluster.sh start|stop DIR}
dir=${2:?usage: slurm-cluster.sh start|stop DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

stop() {
  for name in slurmd slurmctld munged; do
    if [ -f "$dir/$name.pid" ]; then
      pid=$(cat "$dir/$name.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/$name.pid"
    fi
  done
}

if [ "$command" = stop ]; then
  stop
  exit 0
fi
[ "$command" = start ] || { echo "usage: slurm-cluster.sh start|stop DIR" >&2; exit 64; }
[ "$(id -u)" = 0 ] || { echo "slurm-cluster: the daemons run as root here (SlurmUser=root)" >&2; exit 77; }
for tool in munged slurmctld slurmd sbatch sinfo; do
  command -v "$tool" >/dev/null || { echo "slurm-cluster: $tool is missing (make setup installs slurm-wlm and munge)" >&2; exit 69; }
done

host=$(hostname -s)
# slurmstepd makes a Unix socket per job step under the spool directory; its path must fit
# sun_path (108 bytes), so a long DIR makes every job fail to launch and sit "held".
socket="$dir/spool/d/${host}_4294967294.4294967294"
if [ ${#socket} -gt 107 ]; then
  echo "slurm-cluster: $dir is too long for slurmstepd's socket paths (${#socket} > 107 bytes); use a shorter directory" >&2
  exit 64
fi
cpus=$(nproc)
memory=$(($(awk '/MemTotal/ { print $2 }' /proc/meminfo) / 1024 - 512))
mkdir -p "$dir/munge" "$dir/spool/ctld" "$dir/spool/d" "$dir/log" /run/munge
chmod 700 "$dir/munge"
[ -f "$dir/munge/munge.key" ] || { dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none; chmod 400 "$dir/munge/munge.key"; }
# munged keeps its socket where the clients (sbatch, slurmd) look for it by default.
munged --force --key-file="$dir/munge/munge.key" --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/seed" --socket=/run/munge/munge.socket.2

cat >"$dir/slurm.conf" <<CONF
ClusterName=quire-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
StateSaveLocation=$dir/spool/ctld
SlurmdSpoolDir=$dir/spool/d
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=batch Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$dir/slurm.conf"
slurmd -f "$dir/slurm.conf"
for _ in $(seq 100); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
    echo "slurm-cluster: $host up with $cpus CPUs and ${memory} MB (SLURM_CONF=$dir/slurm.conf)"
    exit 0
  fi
  sleep 0.2
done
echo "slurm-cluster: the node did not come up; sinfo says: $(sinfo -h 2>&1 | head -3)" >&2
tail -5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
stop
exit 70

#!/usr/bin/env bash
# A one-node SLURM cluster on this Debian/Ubuntu machine, to try the SLURM profile (and for CI's cluster test).
#
#   sudo profiles/slurm/local-cluster.sh start    # install the packages if missing, configure, start, wait
#   profiles/slurm/local-cluster.sh status        # what runs, what sinfo says, which status command to use
#   sudo profiles/slurm/local-cluster.sh stop     # stop the daemons this script started (and nothing else)
#
# start: installs slurmctld, slurmd, slurm-client and munge with apt-get when a command is missing, writes
# /etc/slurm/slurm.conf for this host (CPUs from nproc, RealMemory from /proc/meminfo) unless a slurm.conf that
# this script did not write is there (then it stops and says so), creates a munge key if there is none, starts
# munged, slurmctld and slurmd directly (no systemd or cgroups needed: proctrack/linuxproc, task/none), and waits
# until sinfo shows the node idle. Running it again while the cluster is up does nothing.
# The cluster has no job accounting (no slurmdbd): the profile's status command, squeue, is what works here.
#
# What it starts and creates is written to $TREEOPT_SLURM_DIR/state (default /var/lib/treeopt-local-slurm);
# stop reads it and stops only those processes (after cancelling the jobs still queued on this cluster). It never
# deletes a file: its slurm.conf, munge key, logs and spool stay, and the next start reuses them.
set -euo pipefail

STATE_DIR="${TREEOPT_SLURM_DIR:-/var/lib/treeopt-local-slurm}"
STATE="$STATE_DIR/state"
CONF=/etc/slurm/slurm.conf
MARKER="# written by treeopt profiles/slurm/local-cluster.sh"
MUNGE_KEY=/etc/munge/munge.key
MUNGE_RUN=/run/munge
PACKAGES=(slurmctld slurmd slurm-client munge)
WAIT_SECONDS="${TREEOPT_SLURM_WAIT:-90}"
NODE="$(hostname -s)"

say() { echo "local-cluster: $*"; }
die() { echo "local-cluster: $1" >&2; exit "${2:-1}"; }

need_root() {
    [ "$(id -u)" -eq 0 ] || die "'$1' needs root: it installs packages, writes $CONF and starts daemons. Run: sudo $0 $1" 2
}

# ---- state: lines "pid NAME PID" (a daemon this script started) and "file PATH" (a file it created) ----------
record() { mkdir -p "$STATE_DIR"; echo "$*" >>"$STATE"; }
recorded_pid() { [ -f "$STATE" ] && awk -v n="$1" '$1 == "pid" && $2 == n { p = $3 } END { if (p) print p }' "$STATE"; }
forget_pid() { [ -f "$STATE" ] && sed -i "/^pid $1 /d" "$STATE" || true; }
record_pid() { forget_pid "$1"; record "pid $1 $2"; }

# alive NAME PID: the process exists and is still that daemon (a recycled pid is not ours)
alive() { [ -n "${2:-}" ] && [ -r "/proc/$2/comm" ] && [ "$(cat "/proc/$2/comm")" = "$1" ]; }

ours_conf() { head -n 1 "$CONF" 2>/dev/null | grep -qF "$MARKER"; }

ours_running() { alive "$1" "$(recorded_pid "$1")"; }

node_state() { sinfo -h -N -n "$NODE" -o '%t' 2>/dev/null | head -n 1; }

# ---- start ---------------------------------------------------------------------------------------------------
install_packages() {
    local missing=()
    command -v slurmctld >/dev/null || missing+=(slurmctld)
    command -v slurmd >/dev/null || missing+=(slurmd)
    command -v sinfo >/dev/null && command -v sbatch >/dev/null || missing+=(slurm-client)
    command -v munged >/dev/null || missing+=(munge)
    [ ${#missing[@]} -eq 0 ] && return
    command -v apt-get >/dev/null ||
        die "missing ${missing[*]} and there is no apt-get: install the SLURM daemons, client and munge (Debian/Ubuntu names: ${PACKAGES[*]}) yourself" 3
    say "installing ${missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || die "apt-get update failed" 3
    apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null ||
        die "apt-get install ${PACKAGES[*]} failed (no such packages on this distribution?)" 3
    record "installed ${missing[*]}"
}

memory_mb() { awk '/^MemTotal:/ { printf "%d", $2 / 1024 }' /proc/meminfo; }

write_conf() {
    if [ -e "$CONF" ] && ! ours_conf; then
        die "$CONF exists and was not written by this script; it is left alone. If it describes a running cluster, use that cluster; otherwise move the file away and start again." 4
    fi
    local cpus mem
    cpus="$(nproc)"
    mem="$(memory_mb)"
    mkdir -p /etc/slurm "$STATE_DIR/slurmctld" "$STATE_DIR/slurmd"
    [ -e "$CONF" ] || record "file $CONF"
    cat >"$CONF" <<EOF
$MARKER (do not edit: start rewrites it)
# One node, $cpus CPUs and $mem MB as seen on $(date -u +%Y-%m-%d); no job accounting (no slurmdbd).
ClusterName=treeopt-local
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$STATE_DIR/slurmctld
SlurmdSpoolDir=$STATE_DIR/slurmd
SlurmctldPidFile=$STATE_DIR/slurmctld.pid
SlurmdPidFile=$STATE_DIR/slurmd.pid
SlurmctldLogFile=$STATE_DIR/slurmctld.log
SlurmdLogFile=$STATE_DIR/slurmd.log
# no systemd or cgroups needed: processes tracked through /proc, no task binding
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
# finished jobs stay visible to squeue for 10 minutes: Snakemake's status checks (squeue) see them finish
MinJobAge=600
# the node is what is written here, whatever slurmd detects (containers report the host's sockets and memory)
SlurmdParameters=config_overrides
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
    say "wrote $CONF ($cpus CPUs, $mem MB)"
}

start_munge() {
    if [ -S "$MUNGE_RUN/munge.socket.2" ] && munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
        ours_running munged || say "munged is already running (not started here; stop will leave it)"
        return
    fi
    if [ ! -e "$MUNGE_KEY" ]; then
        mkdir -p "$(dirname "$MUNGE_KEY")"
        if command -v mungekey >/dev/null; then
            mungekey --create --keyfile="$MUNGE_KEY"
        else
            dd if=/dev/urandom of="$MUNGE_KEY" bs=1024 count=1 status=none
        fi
        record "file $MUNGE_KEY"
        say "created $MUNGE_KEY"
    fi
    local user=root
    if id munge >/dev/null 2>&1; then
        user=munge
        chown munge:munge "$MUNGE_KEY" /etc/munge
        chmod 0400 "$MUNGE_KEY"
        install -d -o munge -g munge -m 0755 "$MUNGE_RUN" /var/log/munge /var/lib/munge
    else
        install -d -m 0755 "$MUNGE_RUN"
    fi
    if [ "$user" = munge ]; then
        runuser -u munge -- munged
    else
        munged --force
    fi
    record_pid munged "$(cat "$MUNGE_RUN/munged.pid")"
    say "started munged"
}

start_daemon() {  # NAME PIDFILE COMMAND...
    local name="$1" pidfile="$2"
    shift 2
    if ours_running "$name"; then
        return
    fi
    if pgrep -x "$name" >/dev/null; then
        die "a $name not started by this script is running (pid $(pgrep -x "$name" | head -n 1)); stop it or use its cluster" 5
    fi
    rm -f "$pidfile"  # our own pid file (in $STATE_DIR), left by a daemon that died
    "$@" || die "$name did not start; see $STATE_DIR/$name.log" 5
    local i
    for i in $(seq 50); do
        [ -s "$pidfile" ] && break
        sleep 0.2
    done
    [ -s "$pidfile" ] || die "$name wrote no pid file; see $STATE_DIR/$name.log" 5
    record_pid "$name" "$(cat "$pidfile")"
    say "started $name (pid $(cat "$pidfile"))"
}

wait_idle() {
    local i state=""
    for i in $(seq "$WAIT_SECONDS"); do
        state="$(node_state)"
        case "$state" in
            idle | mix | alloc) say "node $NODE is $state"; return 0 ;;
            down* | drain* | drng* | fail*)
                scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true ;;
        esac
        sleep 1
    done
    die "node $NODE not idle after ${WAIT_SECONDS}s (sinfo: '${state:-no answer}'); logs: $STATE_DIR/slurmctld.log, $STATE_DIR/slurmd.log" 6
}

start() {
    need_root start
    if ours_running slurmctld && ours_running slurmd && [ -n "$(node_state)" ]; then
        say "already running: node $NODE is $(node_state)"
        return 0
    fi
    install_packages
    write_conf
    start_munge
    start_daemon slurmctld "$STATE_DIR/slurmctld.pid" slurmctld -c -i
    start_daemon slurmd "$STATE_DIR/slurmd.pid" slurmd -N "$NODE"
    wait_idle
    say "ready: snakemake --workflow-profile profiles/slurm (no job accounting here; the profile asks squeue)"
}

# ---- stop ----------------------------------------------------------------------------------------------------
stop_pid() {  # NAME: TERM the recorded daemon, then KILL after 15 s
    local name="$1" pid
    pid="$(recorded_pid "$name")"
    if ! alive "$name" "$pid"; then
        forget_pid "$name"
        return
    fi
    kill -TERM "$pid"
    local i
    for i in $(seq 75); do
        alive "$name" "$pid" || break
        sleep 0.2
    done
    alive "$name" "$pid" && kill -KILL "$pid"
    forget_pid "$name"
    say "stopped $name (pid $pid)"
}

stop() {
    need_root stop
    if ! grep -q '^pid ' "$STATE" 2>/dev/null; then
        say "nothing to stop: this script has no daemon running"
        return 0
    fi
    if ours_running slurmctld; then
        local jobs
        jobs="$(squeue -h -o '%i' 2>/dev/null | tr '\n' ' ')"
        if [ -n "${jobs// /}" ]; then
            say "cancelling the jobs still on this cluster: $jobs"
            # shellcheck disable=SC2086
            scancel $jobs 2>/dev/null || true
            sleep 2
        fi
    fi
    stop_pid slurmd
    stop_pid slurmctld
    stop_pid munged
}

# ---- status --------------------------------------------------------------------------------------------------
status() {
    local running=0 name pid
    for name in munged slurmctld slurmd; do
        pid="$(recorded_pid "$name" || true)"
        if alive "$name" "$pid"; then
            say "$name running (pid $pid, started by this script)"
            running=$((running + 1))
        fi
    done
    if [ -f "$CONF" ]; then
        ours_conf && say "config $CONF (written by this script)" || say "config $CONF (not written by this script)"
    fi
    if command -v sinfo >/dev/null && sinfo -h >/dev/null 2>&1; then
        sinfo -N -o '%N %t %c %m %P'
        if sacct -n -X -S now >/dev/null 2>&1; then
            say "job accounting works: squeue (the profile's) or --slurm-status-command sacct"
        else
            say "no job accounting (sacct fails): keep the profile's --slurm-status-command squeue"
        fi
        return 0
    fi
    say "no SLURM controller answers (start it: sudo $0 start)"
    [ "$running" -gt 0 ] && return 1 || return 3
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac

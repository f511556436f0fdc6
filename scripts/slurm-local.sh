#!/usr/bin/env bash
# slurm-local.sh — run a throw-away, single-node Slurm cluster on localhost.
#
# Meant for tests that need a real `sbatch --wait` / job-array backend inside a
# container (no systemd). Everything (munge key and socket, slurm.conf, state,
# spool, logs, pid files) lives under one STATE_DIR; nothing global is touched
# except the packages installed by `install`.
#
# Usage:
#   slurm-local.sh install            install slurmctld/slurmd/slurm-client/munge
#                                     (apt-get) if missing; exit 3 if impossible
#   slurm-local.sh start  STATE_DIR   write config, start munged+slurmctld+slurmd,
#                                     wait until the node is idle
#   slurm-local.sh stop   STATE_DIR   cancel jobs, stop the daemons of STATE_DIR
#   slurm-local.sh status STATE_DIR   print sinfo and squeue
#
# After `start`, a caller does `. STATE_DIR/env.sh` (sets SLURM_CONF) and can
# then use sbatch/squeue/scontrol/scancel/sinfo as usual.
#
# Environment knobs:
#   SLURM_LOCAL_START_TIMEOUT  seconds to wait for the node to become idle (60)
#   SLURM_LOCAL_MIN_JOB_AGE    MinJobAge: seconds finished jobs stay queryable
#                              with `scontrol show job` (300)
#   SLURM_LOCAL_CPUS           CPUs of the node (default: nproc)
#   SLURM_LOCAL_MEMORY_MB      RealMemory of the node (1000)
set -euo pipefail

PROG=slurm-local
# Marker put in the environment of the daemons we start (and thus inherited by
# slurmstepd), so `stop` can find leftovers of *this* STATE_DIR only. It is not
# exported to callers (env.sh does not set it), so job processes don't carry it.
MARKER_VAR=SLURM_LOCAL_DAEMON_OF

die() { echo "$PROG: $*" >&2; exit 1; }
log() { echo "$PROG: $*" >&2; }

usage() {
    sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
}

# ---------------------------------------------------------------- install ---
cmd_install() {
    local missing=()
    local c
    for c in slurmctld slurmd sbatch munged; do
        command -v "$c" >/dev/null 2>&1 || missing+=("$c")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        log "slurm and munge already installed"
        return 0
    fi
    log "missing: ${missing[*]}; installing with apt-get"
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "$PROG: cannot install ${missing[*]}: apt-get not available" >&2
        exit 3
    fi
    if [ "$(id -u)" != 0 ]; then
        echo "$PROG: cannot install ${missing[*]}: not root" >&2
        exit 3
    fi
    local aptlog
    aptlog=$(mktemp)
    if ! { DEBIAN_FRONTEND=noninteractive apt-get update \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
            slurmctld slurmd slurm-client munge; } >"$aptlog" 2>&1; then
        tail -n 20 "$aptlog" >&2 || true
        rm -f "$aptlog"
        echo "$PROG: cannot install slurmctld slurmd slurm-client munge: apt-get failed" >&2
        exit 3
    fi
    rm -f "$aptlog"
    for c in slurmctld slurmd sbatch munged; do
        if ! command -v "$c" >/dev/null 2>&1; then
            echo "$PROG: cannot install $c: still missing after apt-get" >&2
            exit 3
        fi
    done
    log "installed"
}

# ---------------------------------------------------------------- helpers ---
# abs_dir DIR: canonical absolute path (DIR need not exist yet), so that
# start/stop/status given different spellings of one dir agree. Slurm config
# values cannot contain whitespace, so such paths are refused.
abs_dir() {
    local d
    d=$(realpath -m -- "$1" 2>/dev/null) || case "$1" in
        /*) d=${1%/} ;;
        *) d=$PWD/${1%/} ;;
    esac
    case "$d" in
        *[[:space:]]*) die "STATE_DIR must not contain whitespace: '$d'" ;;
    esac
    printf '%s\n' "$d"
}

# port_in_use PORT: true when something accepts connections on 127.0.0.1:PORT
# or `ss` lists it as listening on any address.
port_in_use() {
    local p=$1
    if command -v ss >/dev/null 2>&1; then
        if ss -Hltn 2>/dev/null | awk '{print $4}' | grep -Eq "[:.]$p\$"; then
            return 0
        fi
    fi
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null
}

# pick_ports: sets CTLD_PORT and SLURMD_PORT to two free ports.
pick_ports() {
    local base p found=()
    # Spread over a range so concurrent clusters rarely collide.
    base=$((20000 + (RANDOM % 2000) * 10))
    for ((p = base; p < base + 200 && ${#found[@]} < 2; p++)); do
        port_in_use "$p" || found+=("$p")
    done
    [ ${#found[@]} -eq 2 ] || die "no free ports found near $base"
    CTLD_PORT=${found[0]}
    SLURMD_PORT=${found[1]}
}

# pid_of_daemon STATE_DIR NAME: prints the pid from the pid file if that
# process is alive AND its command line refers to STATE_DIR (guards against pid
# reuse: we never signal a process that isn't ours).
pid_of_daemon() {
    local sd=$1 name=$2 pidfile pid cmdline
    pidfile="$sd/run/$name.pid"
    [ -s "$pidfile" ] || return 1
    pid=$(tr -dc '0-9' <"$pidfile")
    [ -n "$pid" ] || return 1
    [ -r "/proc/$pid/cmdline" ] || return 1
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)
    case "$cmdline" in
        *"$name"*"$sd/"*) printf '%s\n' "$pid" ;;
        *) return 1 ;;
    esac
}

# leftover_pids STATE_DIR: processes of this STATE_DIR's cluster that outlived
# the daemons: processes whose environment carries our marker (the daemons and
# slurmscriptd), every slurmstepd holding a file under STATE_DIR open (it keeps
# SlurmdLogFile open; it wipes its environment, so the marker is no use there),
# plus all their descendants (the job processes).
leftover_pids() {
    local sd=$1 d pid comm f roots=() all
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        [ "$pid" = "$$" ] && continue
        # Kernel threads / vanished processes give errors: ignore them.
        if { tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qxF "$MARKER_VAR=$sd"; then
            roots+=("$pid")
            continue
        fi
        comm=$(cat "$d/comm" 2>/dev/null || true)
        if [ "$comm" = slurmstepd ]; then
            for f in "$d"/fd/*; do
                case "$(readlink "$f" 2>/dev/null || true)" in
                    "$sd"/*) roots+=("$pid"); break ;;
                esac
            done
        fi
    done
    [ ${#roots[@]} -gt 0 ] || return 0
    # Add descendants (pid -> ppid from /proc/*/stat; comm may contain spaces,
    # so take the fields after the last ')').
    all=$(for d in /proc/[0-9]*; do
        { sed -E 's/^([0-9]+) .*\) [A-Za-z] ([0-9]+) .*/\1 \2/' "$d/stat"; } 2>/dev/null || true
    done | awk -v roots="${roots[*]}" '
        BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
        { parent[$1] = $2 }
        END {
            changed = 1
            while (changed) {
                changed = 0
                for (p in parent) if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 }
            }
            for (p in keep) print p
        }')
    printf '%s\n' $all | grep -vxF "$$" || true
}

# wait_gone SECONDS PID...: wait until all pids are gone; returns 1 on timeout.
wait_gone() {
    local secs=$1
    shift
    local deadline=$((SECONDS + secs)) p alive
    while :; do
        alive=0
        for p in "$@"; do
            if kill -0 "$p" 2>/dev/null; then
                # A zombie counts as gone.
                if [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ]; then
                    alive=1
                fi
            fi
        done
        [ $alive -eq 0 ] && return 0
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.2
    done
}

# ------------------------------------------------------------------- stop ---
stop_dir() {
    local sd=$1
    local conf="$sd/slurm.conf"
    # 1. Cancel jobs while the controller is still up, so their processes exit.
    if [ -f "$conf" ] && pid_of_daemon "$sd" slurmctld >/dev/null; then
        local jobs
        jobs=$(SLURM_CONF=$conf timeout 10 squeue -h -o '%A' 2>/dev/null || true)
        if [ -n "$jobs" ]; then
            # shellcheck disable=SC2086
            SLURM_CONF=$conf timeout 10 scancel $jobs 2>/dev/null || true
            local deadline=$((SECONDS + 15))
            while [ $SECONDS -lt $deadline ]; do
                jobs=$(SLURM_CONF=$conf timeout 10 squeue -h -o '%A' 2>/dev/null || true)
                [ -z "$jobs" ] && break
                sleep 0.5
            done
        fi
    fi
    # 2. Stop the daemons: slurmd first, then slurmctld, munged last (slurm
    #    needs munge to talk while shutting down).
    local name pid
    for name in slurmd slurmctld munged; do
        if pid=$(pid_of_daemon "$sd" "$name"); then
            kill -TERM "$pid" 2>/dev/null || true
            if ! wait_gone 20 "$pid"; then
                log "$name ($pid) did not exit on SIGTERM; sending SIGKILL"
                kill -KILL "$pid" 2>/dev/null || true
                wait_gone 5 "$pid" || log "$name ($pid) still alive"
            fi
            echo "stopped $name (pid $pid)"
        fi
        rm -f "$sd/run/$name.pid"
    done
    # 3. Leftovers (e.g. slurmstepd and job processes when slurmctld had died
    #    and the jobs could not be cancelled).
    local left
    left=$(leftover_pids "$sd" | tr '\n' ' ')
    if [ -n "${left// /}" ]; then
        log "killing leftover processes of $sd: $left"
        # shellcheck disable=SC2086
        kill -TERM $left 2>/dev/null || true
        # shellcheck disable=SC2086
        if ! wait_gone 5 $left; then
            # shellcheck disable=SC2086
            kill -KILL $left 2>/dev/null || true
            # shellcheck disable=SC2086
            wait_gone 5 $left || true
        fi
    fi
}

cmd_stop() {
    [ $# -eq 1 ] || die "usage: $0 stop STATE_DIR"
    local sd
    sd=$(abs_dir "$1")
    [ -d "$sd" ] || { log "$sd does not exist; nothing to stop"; return 0; }
    stop_dir "$sd"
}

# ------------------------------------------------------------------ start ---
show_logs() {
    local sd=$1 f
    for f in "$sd/log/munged.log" "$sd/log/slurmctld.log" "$sd/log/slurmd.log" \
        "$sd/log/munged.out" "$sd/log/slurmctld.out" "$sd/log/slurmd.out"; do
        if [ -s "$f" ]; then
            echo "---- tail $f" >&2
            tail -n 25 "$f" >&2
        fi
    done
}

start_fail() {
    local sd=$1
    shift
    echo "$PROG: $*" >&2
    show_logs "$sd"
    stop_dir "$sd" >/dev/null 2>&1 || true
    exit 1
}

# wait_pidfile STATE_DIR NAME SECONDS: wait until the daemon's pid file names a
# live process of ours.
wait_pidfile() {
    local sd=$1 name=$2 secs=$3 deadline
    deadline=$((SECONDS + secs))
    while ! pid_of_daemon "$sd" "$name" >/dev/null; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.2
    done
}

write_conf() {
    local sd=$1 host=$2 cpus=$3 mem=$4 min_job_age=$5
    cat >"$sd/slurm.conf" <<EOF
# Generated by slurm-local.sh — single-node test cluster on localhost.
ClusterName=localtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
# Bind daemons to the address the host name resolves to (127.0.0.1), not *.
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny

SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sd/munge/munge.socket.2

StateSaveLocation=$sd/ctld
SlurmdSpoolDir=$sd/spool/slurmd.%n
SlurmctldPidFile=$sd/run/slurmctld.pid
SlurmdPidFile=$sd/run/slurmd.pid
SlurmctldLogFile=$sd/log/slurmctld.log
SlurmdLogFile=$sd/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info

ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
PropagateResourceLimits=NONE

SchedulerType=sched/backfill
# Schedule as soon as something changes (defaults delay batch jobs by up to 3s
# and test the whole queue only every 60s): a test cluster wants low latency.
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,sched_interval=5
# Cancel jobs whose dependency can never be satisfied (afterok on a failed
# job) instead of leaving them pending forever (an sbatch --wait would hang).
# (Since Slurm 20.11 this lives in DependencyParameters, not SchedulerParameters.)
DependencyParameters=kill_invalid_depend
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MaxArraySize=10001
MaxJobCount=50000
# Finished jobs stay visible to "scontrol show job" for this many seconds.
MinJobAge=$min_job_age
InactiveLimit=0
KillWait=5
Waittime=0
SlurmctldTimeout=60
SlurmdTimeout=60

NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
}

cmd_start() {
    [ $# -eq 1 ] || die "usage: $0 start STATE_DIR"
    local c
    for c in slurmctld slurmd sbatch sinfo munged; do
        command -v "$c" >/dev/null 2>&1 || die "$c not found (run: $0 install)"
    done
    [ "$(id -u)" = 0 ] || die "must run as root (SlurmUser=root)"

    local sd
    sd=$(abs_dir "$1")
    mkdir -p "$sd"
    # Stop anything still running from a previous start in the same dir.
    stop_dir "$sd" >/dev/null 2>&1 || true

    # Fresh state each start: a restart must not recover stale jobs/nodes.
    rm -rf "$sd/ctld" "$sd/spool" "$sd/run" "$sd/munge" "$sd/log"
    local host cpus mem min_job_age timeout_s
    host=$(hostname -s)
    mkdir -p "$sd/ctld" "$sd/spool/slurmd.$host" "$sd/run" "$sd/munge" "$sd/log"
    # munged insists on non-group/other-writable dirs and a private (0600) key;
    # the socket dir must be searchable by all for non-root clients.
    chmod 0755 "$sd" "$sd/munge"
    cpus=${SLURM_LOCAL_CPUS:-$(nproc)}
    mem=${SLURM_LOCAL_MEMORY_MB:-1000}
    min_job_age=${SLURM_LOCAL_MIN_JOB_AGE:-300}
    timeout_s=${SLURM_LOCAL_START_TIMEOUT:-60}

    pick_ports
    write_conf "$sd" "$host" "$cpus" "$mem" "$min_job_age"
    cat >"$sd/env.sh" <<EOF
# Source this to talk to the local test cluster in $sd.
export SLURM_CONF=$sd/slurm.conf
EOF

    local start_t=$SECONDS

    # --- munge ---
    if command -v mungekey >/dev/null 2>&1; then
        mungekey --create --force --keyfile="$sd/munge/munge.key" >/dev/null 2>&1 \
            || dd if=/dev/urandom of="$sd/munge/munge.key" bs=1 count=1024 status=none
    else
        dd if=/dev/urandom of="$sd/munge/munge.key" bs=1 count=1024 status=none
    fi
    chmod 0600 "$sd/munge/munge.key"
    # --force: munged refuses to run as root otherwise. Daemonises itself.
    env "$MARKER_VAR=$sd" munged --force \
        --socket="$sd/munge/munge.socket.2" \
        --key-file="$sd/munge/munge.key" \
        --pid-file="$sd/run/munged.pid" \
        --log-file="$sd/log/munged.log" \
        --seed-file="$sd/munge/munged.seed" \
        </dev/null >"$sd/log/munged.out" 2>&1 \
        || start_fail "$sd" "munged failed to start"
    wait_pidfile "$sd" munged 10 || start_fail "$sd" "munged did not write its pid file"
    local i
    for ((i = 0; i < 50; i++)); do
        [ -S "$sd/munge/munge.socket.2" ] && break
        sleep 0.1
    done
    [ -S "$sd/munge/munge.socket.2" ] || start_fail "$sd" "munge socket did not appear"

    # --- slurmctld, slurmd (both daemonise themselves; -f points at our conf) ---
    env "$MARKER_VAR=$sd" SLURM_CONF="$sd/slurm.conf" slurmctld -f "$sd/slurm.conf" \
        </dev/null >"$sd/log/slurmctld.out" 2>&1 \
        || start_fail "$sd" "slurmctld failed to start"
    wait_pidfile "$sd" slurmctld 20 || start_fail "$sd" "slurmctld did not start"
    env "$MARKER_VAR=$sd" SLURM_CONF="$sd/slurm.conf" slurmd -f "$sd/slurm.conf" \
        </dev/null >"$sd/log/slurmd.out" 2>&1 \
        || start_fail "$sd" "slurmd failed to start"
    wait_pidfile "$sd" slurmd 20 || start_fail "$sd" "slurmd did not start"

    # --- wait for the node to be idle ---
    local deadline=$((SECONDS + timeout_s)) state=""
    while :; do
        state=$(SLURM_CONF="$sd/slurm.conf" timeout 10 sinfo -h -N -n "$host" -o '%T' 2>/dev/null | head -n1 || true)
        [ "$state" = idle ] && break
        if [ $SECONDS -ge $deadline ]; then
            start_fail "$sd" "node $host not idle after ${timeout_s}s (state: '${state:-?}')"
        fi
        pid_of_daemon "$sd" slurmctld >/dev/null || start_fail "$sd" "slurmctld died"
        pid_of_daemon "$sd" slurmd >/dev/null || start_fail "$sd" "slurmd died"
        sleep 0.5
    done

    echo "slurm-local: cluster up in $((SECONDS - start_t))s (node $host, $cpus CPUs, ports ctld=$CTLD_PORT slurmd=$SLURMD_PORT)"
    echo "munged pid $(pid_of_daemon "$sd" munged)"
    echo "slurmctld pid $(pid_of_daemon "$sd" slurmctld)"
    echo "slurmd pid $(pid_of_daemon "$sd" slurmd)"
    echo "use: . $sd/env.sh"
}

# ----------------------------------------------------------------- status ---
cmd_status() {
    [ $# -eq 1 ] || die "usage: $0 status STATE_DIR"
    local sd
    sd=$(abs_dir "$1")
    [ -f "$sd/slurm.conf" ] || die "$sd/slurm.conf not found (not started?)"
    local name pid
    for name in munged slurmctld slurmd; do
        if pid=$(pid_of_daemon "$sd" "$name"); then
            echo "$name: running (pid $pid)"
        else
            echo "$name: not running"
        fi
    done
    local rc=0
    SLURM_CONF="$sd/slurm.conf" timeout 10 sinfo || rc=$?
    SLURM_CONF="$sd/slurm.conf" timeout 10 squeue || rc=$?
    return $rc
}

main() {
    local cmd=${1:-}
    [ $# -gt 0 ] && shift
    case "$cmd" in
        install) cmd_install "$@" ;;
        start) cmd_start "$@" ;;
        stop) cmd_stop "$@" ;;
        status) cmd_status "$@" ;;
        -h | --help | help) usage ;;
        *) usage >&2; exit 2 ;;
    esac
}

main "$@"

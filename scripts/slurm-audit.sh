#!/usr/bin/env bash
# An audit of docs/SCALE.md on this machine's local Slurm cluster (scripts/slurm-local.sh): an
# `induce explain` job split into an array of TASKS tasks of CPUS CPUs each, merged, with the
# wall time of each task, its peak memory and the whole array's span.
#
#   scripts/slurm-audit.sh ROOT TASKS CPUS `induce explain` arguments (without --out)
#
# The array's run goes to ROOT (replaced), merged into ROOT/merged. Relative paths in the
# arguments are relative to the current directory. Needs root (the cluster's daemons) and
# target/release/induce.
set -euo pipefail
bin=$(realpath "$(dirname "$0")/../target/release/induce")
local_sh=$(realpath "$(dirname "$0")/slurm-local.sh")
[ $# -ge 4 ] || { sed -n '2,10p' "$0"; exit 2; }
root=$(realpath -m "$1"); tasks=$2; cpus=$3; shift 3
state=$(mktemp -d /tmp/audit-state.XXXX)
trap '"$local_sh" stop "$state" >/dev/null 2>&1 || true' EXIT
SLURM_LOCAL_MIN_JOB_AGE=3600 SLURM_LOCAL_MEMORY_MB=${SLURM_LOCAL_MEMORY_MB:-8000} \
  "$local_sh" start "$state" >/dev/null
. "$state/env.sh"
rm -rf "$root"
"$bin" slurm --tasks "$tasks" --cpus-per-task "$cpus" --mem 1G --time 04:00:00 --out "$root" \
  -- "$@" >/dev/null
t0=$(date +%s); jid=$(sbatch --parsable --wait "$root/explain.sbatch"); t1=$(date +%s)
jid=${jid%%;*}
echo "array job $jid: $tasks tasks x $cpus CPUs, sbatch --wait returned after $((t1 - t0)) s"
scontrol -o show job "$jid" | python3 -c '
import sys, datetime
rows = []
for l in sys.stdin:
    f = dict(x.split("=", 1) for x in l.split() if "=" in x)
    s = datetime.datetime.fromisoformat(f["StartTime"]); e = datetime.datetime.fromisoformat(f["EndTime"])
    rows.append((int(f.get("ArrayTaskId", 0)), s, e, f["JobState"]))
rows.sort()
for i, s, e, st in rows:
    print(f"task {i}: {st}, {int((e - s).total_seconds())} s ({s.time()} to {e.time()})")
print("span:", int((max(r[2] for r in rows) - min(r[1] for r in rows)).total_seconds()), "s from the first start to the last end")'
grep -H "peak resident memory" "$root"/logs/explain-*.out || true
"$bin" merge --from "$root" --count "$tasks" --out "$root/merged"
python3 - "$root/merged" <<'PY'
import json, sys
root = sys.argv[1]
s = json.load(open(f"{root}/summary.json"))
for r in s["runs"]:
    keys = ["method", "targets", "found", "valid", "fidelity", "size_mean", "one_minimal", "explain_seconds"]
    print({k: r.get(k) for k in keys})
n = sum(1 for _ in open(f"{root}/explanations.jsonl"))
print(n, "records in explanations.jsonl")
PY

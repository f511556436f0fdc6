#!/usr/bin/env bash
# slurm-test.sh BIN — an audit on a real local Slurm cluster (scripts/slurm-local.sh), end to end:
#
#  1. `induce slurm` writes the array of a 4-shard audit of a built-in dataset; `sbatch --wait`
#     runs it on slurmctld + slurmd (2 tasks at a time on this 2-core machine); `induce merge
#     --from` joins the shards; the merged explanations.jsonl must be byte-identical to an
#     unsharded `induce explain` of the same job.
#  2. One task fails on purpose (its output path is blocked by a file): the array's
#     `sbatch --wait` fails, `induce merge` names the shard (index and directory), a rerun of
#     that index alone (`sbatch --wait --array=3`) completes the run, and the merge is again
#     byte-identical. Merging twice gives the same run.
#
# BIN is the `induce` binary (default target/release/induce). Skips (exit 0, saying so) only
# where the Slurm packages cannot be installed. The daemons listen on localhost only and are
# stopped at the end, also when a check fails; every wait is bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/induce}")
here=$(pwd)
say() { echo "slurm-test: $*"; }

if [ "$(id -u)" != 0 ]; then
  say "skipped: the local cluster runs its daemons as root (slurm-local.sh); this user is not root"
  exit 0
fi
rc=0
scripts/slurm-local.sh install || rc=$?
if [ "$rc" = 3 ]; then
  say "skipped: the Slurm packages (slurmctld, slurmd, slurm-client, munge) cannot be installed here"
  exit 0
elif [ "$rc" != 0 ]; then
  exit "$rc"
fi

state=$(mktemp -d /tmp/induce-slurm-state.XXXXXX)
work=$(mktemp -d /tmp/induce-slurm-work.XXXXXX)
cleanup() {
  "$here/scripts/slurm-local.sh" stop "$state" || true
  rm -rf "$state" "$work"
}
trap cleanup EXIT
timeout 120 scripts/slurm-local.sh start "$state"
# shellcheck disable=SC1091
. "$state/env.sh"
sinfo

# The job: a black box trained once, two methods, the paper's test targets of Tree-Cycles.
"$bin" train-black-box --data tree-cycles --out "$work/bb" >/dev/null
job=(--data tree-cycles --black-box "$work/bb" --method transductive,random --episodes 20)
"$bin" explain "${job[@]}" --no-progress --out "$work/whole" >/dev/null

# 1. The array, merged, equals the unsharded run.
"$bin" slurm --tasks 4 --mem 500M --time 00:10:00 --out "$work/audit" -- "${job[@]}"
jid=$(timeout 600 sbatch --parsable --wait "$work/audit/explain.sbatch")
say "array job ${jid%%;*} finished"
scontrol show job "${jid%%;*}" | grep -E "JobId=|JobState=" | sed 's/^ */  /' || true
"$bin" merge --from "$work/audit" --count 4 --out "$work/audit/merged" >/dev/null
cmp "$work/whole/explanations.jsonl" "$work/audit/merged/explanations.jsonl"
say "4-task array merged: explanations.jsonl identical to the unsharded run"

# 2. A failed task is named by merge; rerunning its index alone completes the run.
rm -rf "$work/audit/shard-3" "$work/audit/merged"
echo "not a run" > "$work/audit/shard-3"      # the task cannot write its output there
set +e
fjid=$(timeout 600 sbatch --parsable --wait --array=3 "$work/audit/explain.sbatch" 2>/dev/null)
frc=$?
set -e
if [ "$frc" = 0 ]; then
  say "FAILED: the blocked task did not fail"; exit 1
fi
say "array task 3 (job ${fjid%%;*}) failed as intended, sbatch --wait exit $frc: \
$(tail -n 1 "$work/audit/logs/explain-${fjid%%;*}_3.out")"
if out=$("$bin" merge --from "$work/audit" --count 4 --out "$work/audit/merged" 2>&1); then
  say "FAILED: merge accepted a run with a failed shard"; exit 1
fi
echo "$out"
echo "$out" | grep -q "shard 3/4 at $work/audit/shard-3" \
  || { say "FAILED: merge did not name shard 3 and its directory"; exit 1; }
rm "$work/audit/shard-3"
jid=$(timeout 600 sbatch --parsable --wait --array=3 "$work/audit/explain.sbatch")
say "rerun of index 3 (job ${jid%%;*}) finished"
"$bin" merge --from "$work/audit" --count 4 --out "$work/audit/merged" >/dev/null
cmp "$work/whole/explanations.jsonl" "$work/audit/merged/explanations.jsonl"
cp "$work/audit/merged/summary.json" "$work/summary-1.json"
"$bin" merge --from "$work/audit" --count 4 --out "$work/audit/merged" >/dev/null
cmp "$work/audit/merged/explanations.jsonl" "$work/whole/explanations.jsonl"
cmp "$work/summary-1.json" "$work/audit/merged/summary.json"
say "after the rerun: merged run identical to the unsharded one; merging again changes nothing"
say "passed"

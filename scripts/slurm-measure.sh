#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/target/release/induce
state=$(mktemp -d /tmp/m-state.XXXX); work=$(mktemp -d /tmp/m-work.XXXX)
trap 'scripts/slurm-local.sh stop $state >/dev/null 2>&1 || true' EXIT
scripts/slurm-local.sh start $state >/dev/null 2>&1
. $state/env.sh
$bin train-black-box --data ba-shapes --out $work/bb >/dev/null
job=(--data ba-shapes --black-box $work/bb --method transductive,cf2)
t0=$(date +%s.%N); $bin explain "${job[@]}" --threads 2 --no-progress --out $work/whole >/dev/null 2>&1; t1=$(date +%s.%N)
echo "unsharded, 2 threads: $(echo "$t1 - $t0" | bc) s"
/usr/bin/time -f "peak RSS of one shard 1/4 (1 thread): %M KiB, %e s" $bin explain "${job[@]}" --shard 1/4 --threads 1 --no-progress --out $work/s14 >/dev/null 2>/tmp/m-time.txt || true
tail -1 /tmp/m-time.txt
for spec in "1 2" "2 1" "4 1" "8 1"; do
  set -- $spec
  $bin slurm --tasks $1 --cpus-per-task $2 --mem 500M --time 00:20:00 --out $work/a$1 -- "${job[@]}" >/dev/null
  t0=$(date +%s.%N); jid=$(sbatch --parsable --wait $work/a$1/explain.sbatch); t1=$(date +%s.%N)
  span=$(scontrol -o show job ${jid%%;*} | python3 -c '
import sys,datetime
s=[];e=[]
for l in sys.stdin:
    f=dict(x.split("=",1) for x in l.split() if "=" in x)
    s.append(datetime.datetime.fromisoformat(f["StartTime"])); e.append(datetime.datetime.fromisoformat(f["EndTime"]))
print(int((max(e)-min(s)).total_seconds()), "s from the first start to the last end")')
  $bin merge --from $work/a$1 --count $1 --out $work/a$1/merged >/dev/null
  cmp $work/whole/explanations.jsonl $work/a$1/merged/explanations.jsonl
  echo "array of $1 tasks x $2 CPU: $span; $(echo "$t1 - $t0" | bc) s until sbatch --wait returned; merged = unsharded"
done

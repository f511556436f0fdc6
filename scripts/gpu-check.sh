#!/usr/bin/env bash
# The GPU check, run on a lent GPU machine (no network) over the binaries scripts/gpu-prep.sh
# built: examples/gpu_check.rs on the GPU backends and on this machine's CPU (Flex, all cores)
# in one run (message-passing kernel checks, parity with the authors' explanations with the
# Burn kernel, full-batch GCN epochs on the ogbn-arxiv-sized graph with the segment kernel
# beside scatter-add), then the models' unit tests on each GPU backend (INDUCE_BACKEND).
# Writes $OUT/gpu-check.json, gpu_check.json and the logs. Carry .gpu and .gl.
#
# With the induce binary and a graph (GPU_BINS=induce, EXPLAIN_DATA, EXPLAIN_BB in gpu-prep.sh),
# a third step explains SAMPLE (default 300) test targets inductively with an untrained policy:
# the host kernel on all CPU cores, then the policy's Burn kernel on each GPU backend with the
# targets in batches of each of BATCHES (default "300") and the black box on the host kernel
# (BB_KERNEL=burn puts it on the GPU too), and compares the explanations (explain-*.json);
# BATCHED_VERDICTS (default 1) adds a run with the black box on the GPU as well
# (--black-box-kernel burn), whose verdicts are then taken for the whole batch at once
# (VerdictBatch); 0 skips it.
# REPACKED (default 1) repeats the first of those with INDUCE_RESIDENT=0: the batch packed and
# uploaded whole every round instead of kept on the device between rounds (BurnOptions::resident),
# for a side-by-side ratio; 0 skips it.
# UNFUSED (default 1) repeats it with INDUCE_FUSED=0: the policy's scoring MLP and GAT attention
# composed of Burn's operations instead of one kernel each (induce_models::fused); 0 skips it.
# NO_WARM_UP (default 1) repeats it with INDUCE_WARM_UP=0: without the policy's first round
# played beside the episodes' construction (InduceExplainer::with_warm_up, which moves kernel
# compilation under the host's work); 0 skips it.
# PER_EPISODE=1 repeats each batch with INDUCE_GPU_LAYOUT=per-episode (the GPU layout's
# graph-wide feature product and device-side greedy choices off) for a side-by-side ratio.
# Before the big graph, the host kernel against the GPU on the authors' graphs (SYN, default
# "syn1 syn5"; SYN= skips).
# WARM (default 1) explains the first GPU batch's job and the host job twice more each, every
# time in one process (gpu_check --explain-job: data and black box loaded once): the first run
# pays CubeCL's in-process kernel compilation, the second shows the steady state
# (warm-<name>.log, explain_repeat.json); 0 skips it.
# HOST_TWICE (default 1) runs the host kernels again after the GPU runs; every GPU run's ratio
# host / GPU is printed against both host runs ("ratio host / ...") and kept in gpu-check.json
# (host_over_gpu: [min, max] of the two ratios).
#
# With the explain graph, gpu_check also times one round of batched exact verdicts on it (the
# GCN on 300 edited copies at once, GPU backends only).
# EPOCHS (default 3): GCN epochs per backend and aggregation (the rows time the epochs after the
# first; the first, with kernel compilation and autotuning, is in each row's detail).
# TESTS=0 skips the unit tests, CHECK=0 the gpu_check run.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-check}
# The explain runs write here and are archived into $OUT at the end: a call that times out then
# still returns gpu-check's own files (the device tool returns at most 8 files from $OUT).
WORK=${WORK:-/tmp/gpu-check-work}
EPOCHS=${EPOCHS:-3}
mkdir -p "$OUT" "$WORK" && rm -rf "$WORK"/explain-* "$WORK"/warm-*
[ -d .gpu ] || { echo "no .gpu here: run scripts/gpu-prep.sh first and carry .gpu and .gl" >&2; exit 1; }
for f in .gl/*.deb; do [ -e "$f" ] && dpkg -x "$f" /; done
ldconfig
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
bin=/tmp/induce-gpu && mkdir -p "$bin"
for f in .gpu/*.xz; do xz -dc "$f" > "$bin/$(basename "$f" .xz)"; chmod +x "$bin/$(basename "$f" .xz)"; done
[ -f .gpu/explain/graph.npz.xz ] && xz -dc .gpu/explain/graph.npz.xz > "$bin/graph.npz"
features=$(cat .gpu/features 2>/dev/null || echo cuda)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
echo "GPU: $gpu; features: $features; $(nproc) CPU cores"

# 1. Kernels, parity and GCN epochs: the GPU backends, then the CPU, in one run.
check_rc=-1
if [ "${CHECK:-1}" != 0 ]; then
  verdict=()
  [ -f "$bin/graph.npz" ] && verdict=(--verdict-data "$bin/graph.npz")
  "$bin/gpu_check" --backends "$features,flex" --reference .gpu/reference --epochs "$EPOCHS" \
    "${verdict[@]}" --out "$OUT" 2>&1 | tee "$OUT/gpu_check.log"
  check_rc=${PIPESTATUS[0]}
fi


# 2. The models' unit tests on each GPU backend.
tests_json=""
if [ "${TESTS:-1}" != 0 ]; then
  for b in ${features//,/ }; do
    s=$(date +%s)
    INDUCE_BACKEND=$b timeout 300 "$bin/models-tests" --test-threads 1 > "$OUT/models-tests-$b.log" 2>&1
    rc=$?
    passed=$(grep -o '[0-9]* passed' "$OUT/models-tests-$b.log" | tail -1 | cut -d' ' -f1)
    failed=$(grep -o '[0-9]* failed' "$OUT/models-tests-$b.log" | tail -1 | cut -d' ' -f1)
    echo "models tests on $b: exit $rc, ${passed:-0} passed, ${failed:-0} failed ($(( $(date +%s) - s )) s)"
    grep -E "^test .*FAILED|panicked" "$OUT/models-tests-$b.log" | head -5
    tests_json+="\"$b\": {\"exit\": $rc, \"passed\": ${passed:-0}, \"failed\": ${failed:-0}},"
  done
fi


# 3. Batched inductive explanations: host kernel (all cores) vs the Burn kernel on the GPU, first
# on the authors' syn1 / syn5 graphs (eval targets; a check that the GPU's GAT softmax gives the
# host's explanations), then on the big graph. Every run profiles its phases (INDUCE_PROFILE):
# the last "profile:" line of each log says where the time went, even after a timeout.
explain_json=""
declare -A explain_secs # name -> explain seconds, for the ratios to the host kernels
ratios_json=""
compare() { # host run name, GPU run name: the explanations target by target
  [ -f "$WORK/explain-$1/explanations.jsonl" ] && [ -f "$WORK/explain-$2/explanations.jsonl" ] &&
    python3 scripts/compare-explanations.py "$WORK/explain-$1/explanations.jsonl" \
      "$WORK/explain-$2/explanations.jsonl" | sed "s/^/  $2 vs $1: /"
}
run_explain() { # name, data, black box, then induce explain arguments
  local name=$1 data=$2 bb=$3; shift 3
  local s=$(date +%s.%N)
  INDUCE_PROFILE=1 timeout "${EXPLAIN_TIMEOUT:-240}" "$bin/induce" explain --data "$data" \
    --black-box "$bb" --method untrained --out "$WORK/explain-$name" "$@" \
    > "$WORK/explain-$name.log" 2>&1
  local rc=$? secs
  secs=$(python3 -c "import json; print(json.dumps(json.load(open('$WORK/explain-$name/summary.json'))['runs'][0]['explain_seconds']))" 2>/dev/null || echo null)
  local sum=$(md5sum < "$WORK/explain-$name/explanations.jsonl" 2>/dev/null | cut -c1-12)
  echo "explain $name: exit $rc, explain ${secs} s, wall $(python3 -c "import time; print(round(time.time() - $s, 2))") s, explanations ${sum:-none}"
  grep "^profile: round" "$WORK/explain-$name.log" | tail -1
  explain_json+="\"$name\": {\"exit\": $rc, \"explain_seconds\": $secs, \"explanations_md5\": \"${sum:-}\"},"
  explain_secs[$name]=$secs
  # As the runs go (gpu-check.json is written at the end, and a device call can time out).
  echo "$name exit $rc explain_seconds $secs md5 ${sum:-none}" >> "$OUT/progress-explain.txt"
}
if [ -x "$bin/induce" ] && [ "${EXPLAIN:-1}" != 0 ]; then
  for syn in ${SYN-syn1 syn5}; do
    ref=.gpu/reference
    run_explain "$syn-host" "$ref/$syn.npz" "$ref/${syn}_gcn.safetensors" --targets eval \
      --kernel host --threads "$(nproc)"
    for b in ${features//,/ }; do
      INDUCE_BACKEND=$b run_explain "$syn-$b-batch16" "$ref/$syn.npz" \
        "$ref/${syn}_gcn.safetensors" --targets eval --kernel burn --batch-targets 16 \
        --black-box-kernel host --threads "$(nproc)"
      compare "$syn-host" "$syn-$b-batch16"
    done
  done
fi
if [ -x "$bin/induce" ] && [ -f "$bin/graph.npz" ] && [ "${EXPLAIN:-1}" != 0 ]; then
  sample=${SAMPLE:-300}
  big=(--targets test --sample "$sample" --threads "$(nproc)")
  run_explain host "$bin/graph.npz" .gpu/explain/bb "${big[@]}" --kernel host
  for b in ${features//,/ }; do
    for k in ${BATCHES:-300}; do
      INDUCE_BACKEND=$b run_explain "$b-batch$k" "$bin/graph.npz" .gpu/explain/bb "${big[@]}" \
        --kernel burn --batch-targets "$k" --black-box-kernel "${BB_KERNEL:-host}"
      compare host "$b-batch$k"
      if [ "${WARM:-1}" != 0 ] && [ -z "${warm_done:-}" ] && [ -x "$bin/gpu_check" ]; then
        warm_done=1 # one process each, the GPU job then the host job: cold run, then warm run
        for w in "$b:$b-batch$k" "flex:host"; do
          wb=${w%%:*} wn=${w#*:}
          [ -f "$WORK/explain-$wn/config.json" ] || continue
          timeout "${EXPLAIN_TIMEOUT:-240}" "$bin/gpu_check" --backends "$wb" \
            --explain-job "$WORK/explain-$wn/config.json" --explain-repeat 2 \
            --out "$WORK/warm-$wn" > "$WORK/warm-$wn.log" 2>&1
          echo "warm $wn (exit $?): $(grep -h 'explain run' "$WORK/warm-$wn.log" | tr '\n' ';')"
        done
      fi
      if [ "${REPACKED:-1}" != 0 ]; then # the batch uploaded whole every round
        INDUCE_RESIDENT=0 INDUCE_BACKEND=$b run_explain "$b-batch$k-repacked" "$bin/graph.npz" \
          .gpu/explain/bb "${big[@]}" --kernel burn --batch-targets "$k" \
          --black-box-kernel "${BB_KERNEL:-host}"
        compare "$b-batch$k-repacked" "$b-batch$k"
      fi
      if [ "${UNFUSED:-1}" != 0 ]; then # the policy's MLP and GAT attention composed, not fused
        INDUCE_FUSED=0 INDUCE_BACKEND=$b run_explain "$b-batch$k-unfused" "$bin/graph.npz" \
          .gpu/explain/bb "${big[@]}" --kernel burn --batch-targets "$k" \
          --black-box-kernel "${BB_KERNEL:-host}"
        compare "$b-batch$k-unfused" "$b-batch$k"
      fi
      if [ "${NO_WARM_UP:-1}" != 0 ]; then # kernels compiled on first use, not beside the build
        INDUCE_WARM_UP=0 INDUCE_BACKEND=$b run_explain "$b-batch$k-no-warm-up" "$bin/graph.npz" \
          .gpu/explain/bb "${big[@]}" --kernel burn --batch-targets "$k" \
          --black-box-kernel "${BB_KERNEL:-host}"
        compare "$b-batch$k-no-warm-up" "$b-batch$k"
      fi
      if [ "${BATCHED_VERDICTS:-1}" != 0 ]; then # the black box on the GPU, batched verdicts
        INDUCE_BACKEND=$b run_explain "$b-batch$k-bb-burn" "$bin/graph.npz" .gpu/explain/bb \
          "${big[@]}" --kernel burn --batch-targets "$k" --black-box-kernel burn
        compare host "$b-batch$k-bb-burn"
      fi
      if [ "${PER_EPISODE:-0}" != 0 ]; then # the layout before (no graph-wide product, no device greedy)
        INDUCE_GPU_LAYOUT=per-episode INDUCE_BACKEND=$b run_explain "$b-batch$k-per-episode" \
          "$bin/graph.npz" .gpu/explain/bb "${big[@]}" --kernel burn --batch-targets "$k" \
          --black-box-kernel "${BB_KERNEL:-host}"
        compare "$b-batch$k-per-episode" "$b-batch$k"
      fi
    done
  done
  # The host kernels again, after the GPU runs: this machine's CPU speed varied by 50 % between
  # calls, so each GPU run is compared with both host runs that bracket it.
  if [ "${HOST_TWICE:-1}" != 0 ]; then
    run_explain host-again "$bin/graph.npz" .gpu/explain/bb "${big[@]}" --kernel host
  fi
  ratios_json=""
  for name in "${!explain_secs[@]}"; do
    case $name in host | host-again | syn*) continue ;; esac
    line=$(python3 - "${explain_secs[host]:-null}" "${explain_secs[host-again]:-null}" \
      "${explain_secs[$name]:-null}" <<'PY'
import sys
def num(x):
    try:
        return float(x)
    except ValueError:
        return None
h = [v for v in map(num, sys.argv[1:3]) if v is not None]
g = num(sys.argv[3])
if not h or g is None or g <= 0:
    print("null")
else:
    print(f"[{min(h) / g:.3f}, {max(h) / g:.3f}]")
PY
)
    echo "ratio host / $name (each host run): $line"
    ratios_json+="\"$name\": $line,"
  done
fi

# The explain runs (directories, logs, the warm runs) in one archive: the device tool returns at
# most 8 files, and gpu-check.json and gpu_check.log must be among them.
archive=$(cd "$WORK" && ls -d explain-* warm-* 2>/dev/null)
if [ -n "$archive" ]; then
  (cd "$WORK" && tar czf "$OUT/explain-runs.tgz" $archive)
fi

cat > "$OUT/gpu-check.json" <<JSON
{
  "gpu": "$gpu",
  "cpu_cores": $(nproc),
  "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "models_tests": {${tests_json%,}},
  "explain": {${explain_json%,}},
  "host_over_gpu": {${ratios_json%,}},
  "gpu_check_exit": $check_rc
}
JSON
cat "$OUT/gpu-check.json"

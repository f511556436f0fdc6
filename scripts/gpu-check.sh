#!/usr/bin/env bash
# The GPU check, run on a lent GPU machine (no network) over binaries that scripts/gpu-prep.sh
# built here: the models' unit tests on the Vulkan backend, parity with the authors'
# explanations with the Burn kernel on the GPU, and GPU-versus-CPU timings on the same machine
# (full-batch GCN training and inference on the ogbn-arxiv-sized graph, the bench table).
# Writes $OUT/gpu-check.json and the logs beside it. Carry .gpu and .gl.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-check}
EPOCHS=${EPOCHS:-20}   # full-batch GCN epochs on the arxiv-sized graph, per backend
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
bin=/tmp/induce-gpu && mkdir -p "$bin"
for f in .gpu/*.xz; do xz -dc "$f" > "$bin/$(basename "$f" .xz)"; chmod +x "$bin/$(basename "$f" .xz)"; done
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
# timed LOG CMD...: runs CMD with its output in LOG, prints "exit-status milliseconds".
timed() {
  local log=$1; shift
  local s; s=$(date +%s%N)
  "$@" > "$log" 2>&1
  local rc=$?
  echo "$rc $(( ($(date +%s%N) - s) / 1000000 ))"
}

# 1. The models' unit tests on the GPU.
INDUCE_BACKEND=vulkan "$bin/models-tests" --test-threads 1 > "$OUT/models-tests.log" 2>&1
tests_rc=$?
passed=$(grep -o '[0-9]* passed' "$OUT/models-tests.log" | tail -1 | cut -d' ' -f1)
failed=$(grep -o '[0-9]* failed' "$OUT/models-tests.log" | tail -1 | cut -d' ' -f1)

# 2. Parity with the authors' shipped explanations, Burn kernel on the GPU and on Flex.
"$bin/reference_parity" --data .gpu/reference --backend vulkan --kernel burn --out "$OUT/parity-vulkan" \
  > "$OUT/parity-vulkan.log" 2>&1
parity_rc=$?
"$bin/reference_parity" --data .gpu/reference --backend flex --kernel burn --out "$OUT/parity-flex" \
  > "$OUT/parity-flex.log" 2>&1

# 3. Full-batch GCN training on the ogbn-arxiv-sized graph: the GPU against this machine's CPU.
"$bin/induce" data generate --kind arxiv-like --out /tmp/arxiv.npz > /dev/null
read -r vk_rc vk_ms < <(timed "$OUT/arxiv-vulkan.log" "$bin/induce" train-black-box --backend vulkan \
  --data /tmp/arxiv.npz --hidden 128 --epochs "$EPOCHS" --out /tmp/bb-vulkan --no-progress)
read -r cpu_rc cpu_ms < <(timed "$OUT/arxiv-flex.log" "$bin/induce" train-black-box --backend flex \
  --data /tmp/arxiv.npz --hidden 128 --epochs "$EPOCHS" --out /tmp/bb-flex --no-progress)

cat > "$OUT/gpu-check.json" <<JSON
{
  "gpu": "$gpu",
  "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "models_tests": {"exit": $tests_rc, "passed": ${passed:-0}, "failed": ${failed:-0}},
  "parity_vulkan": {"exit": $parity_rc, "summary": "$(grep -h identical "$OUT/parity-vulkan.log" | tr '\n' ';')"},
  "parity_flex": "$(grep -h identical "$OUT/parity-flex.log" | tr '\n' ';')",
  "arxiv_gcn": {
    "epochs": $EPOCHS,
    "vulkan": {"exit": $vk_rc, "ms": $vk_ms, "report": "$(tail -1 "$OUT/arxiv-vulkan.log" | tr -d '"')"},
    "flex": {"exit": $cpu_rc, "ms": $cpu_ms, "report": "$(tail -1 "$OUT/arxiv-flex.log" | tr -d '"')"}
  }
}
JSON
cat "$OUT/gpu-check.json"

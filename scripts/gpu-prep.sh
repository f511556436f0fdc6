#!/usr/bin/env bash
# Prepares the GPU check (scripts/gpu-check.sh) on a build machine WITHOUT a GPU.
#
# Builds, with the GPU features (default `cuda`; GPU_FEATURES=cuda,vulkan or vulkan to change),
# in target/<features>/ (e.g. target/cuda) so the CPU build in target/ is left alone, the
# binaries named in GPU_BINS (default "gpu_check models-tests"; at most two fit one run):
#   - gpu_check (examples/gpu_check.rs): kernel checks, parity and GCN epoch timings per backend;
#   - models-tests: the induce-models unit tests (run on the GPU through INDUCE_BACKEND);
#   - induce: the command line, for the batched-explain step (gpu_check and induce together
#     are about 58 MB compressed: both fit one run) (EXPLAIN_DATA=graph.npz and
#     EXPLAIN_BB=black-box-dir are copied beside it: e.g. the Amazon-Photo graph of
#     docs/RESULTS.md and its black box).
# Strips and xz-compresses both into .gpu/ (a CUDA binary carries LLVM's NVPTX backend: about
# 28 MB compressed; the device tool carries at most 64 MiB per run), copies the authors'
# reference files beside them (../shared does not travel) and, for Vulkan, fetches the loader
# packages into .gl/.
#
# CUDA builds offline with no CUDA toolkit: scripts/cuda-llvm.sh (run here) installs LLVM 23 from
# PyPI where Burn's build looks for it. A first CUDA build takes 15-40 minutes on 2 cores (15 min 16 s
# for gpu_check + induce on 2026-11-28), then about 2 minutes after a change to our crates.
#
#   scripts/gpu-prep.sh      # then, on the GPU machine: scripts/gpu-check.sh (carry .gpu, .gl)
set -euo pipefail
cd "$(dirname "$0")/.."
features=${GPU_FEATURES:-cuda}
mkdir -p .git/info
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo '/.gl/' >> .git/info/exclude
bins=${GPU_BINS:-gpu_check models-tests}
ref=${INDUCE_SHARED:-../shared}/reference
ref_files=("$ref"/syn{1,4,5}.npz "$ref"/syn{1,4,5}_gcn.safetensors "$ref"/syn{1,4,5}_policy.safetensors
  "$ref"/syn{1,4,5}_inductive_expected.json)
# Every input is checked before the build (15-40 minutes), not after it.
for f in "${ref_files[@]}"; do
  [ -f "$f" ] || { echo "missing reference file $f (set INDUCE_SHARED to the folder holding reference/)" >&2; exit 1; }
done
case " $bins " in
  *" induce "*)
    if [ -n "${EXPLAIN_DATA:-}" ]; then
      [ -f "$EXPLAIN_DATA" ] || { echo "EXPLAIN_DATA=$EXPLAIN_DATA: no such file (docs/GPU.md says how to make it)" >&2; exit 1; }
      [ -f "${EXPLAIN_BB:-}/black_box.bpk" ] || { echo "EXPLAIN_BB=${EXPLAIN_BB:-}: no black_box.bpk in it (induce train-black-box --out DIR)" >&2; exit 1; }
    fi ;;
esac
case ",$features," in *,cuda,*) scripts/cuda-llvm.sh ;; esac
export CARGO_TARGET_DIR=target/${features//,/-}
rm -rf .gpu && mkdir -p .gpu/reference

# gpu_check and induce in one cargo call: built apart, the example's dev-dependencies unify
# Burn's features differently and each build recompiles the CubeCL stack (~10 minutes here).
targets=()
for b in $bins; do
  case $b in
    gpu_check) targets+=(--example gpu_check) ;;
    induce) targets+=(--bin induce) ;;
  esac
done
[ ${#targets[@]} -eq 0 ] || cargo build --release --features "$features" "${targets[@]}"
for b in $bins; do
  case $b in
    gpu_check)
      strip -o .gpu/gpu_check "$CARGO_TARGET_DIR/release/examples/gpu_check" ;;
    models-tests)
      model_features=$(echo "$features" | sed 's/\([a-z-]*\)/induce-models\/\1/g')
      models_test=$( (cargo test --release -p induce-models --features "$model_features" --no-run \
        --message-format=json || echo "cargo test --no-run failed" >&2) | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") \
       and m["target"]["name"] == "induce_models" and m["profile"]["test"]:
        print(m["executable"])' | tail -1 || true)
      test -x "$models_test" || { echo "no induce-models test binary"; exit 1; }
      strip -o .gpu/models-tests "$models_test" ;;
    induce)
      strip -o .gpu/induce "$CARGO_TARGET_DIR/release/induce"
      if [ -n "${EXPLAIN_DATA:-}" ]; then
        mkdir -p .gpu/explain/bb
        cp "$EXPLAIN_DATA" .gpu/explain/graph.npz
        cp "$EXPLAIN_BB"/* .gpu/explain/bb/
        xz -T2 -6 -f .gpu/explain/graph.npz
      fi ;;
    *) echo "unknown GPU_BINS entry: $b (gpu_check, models-tests, induce)"; exit 2 ;;
  esac
  xz -T2 -6 -f ".gpu/$b"
done
echo "$features" > .gpu/features
cp "${ref_files[@]}" .gpu/reference/
case ",$features," in
  *,vulkan,*)
    if [ ! -d .gl ] || ! ls .gl/*.deb >/dev/null 2>&1; then
      mkdir -p .gl /tmp/amd64/partial
      o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
      apt-get $o update >/dev/null
      (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0)
    fi ;;
  *) mkdir -p .gl ;;
esac
du -sh .gpu .gl
# The device tool carries at most 64 MiB per run: the tracked tree, .gpu and .gl together.
tree=$(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
carried=$(du -cb .gpu .gl | tail -1 | cut -f1)
total=$(( (tree + carried) / 1048576 ))
echo "travels: ${total} MiB of 64 (tracked tree $(( tree / 1048576 )) MiB, .gpu + .gl $(( carried / 1048576 )) MiB)"
[ "$total" -lt 63 ] || { echo "over the device tool's 64 MiB: build fewer GPU_BINS per run" >&2; exit 1; }

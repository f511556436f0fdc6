#!/usr/bin/env bash
# Prepares the GPU check (scripts/gpu-check.sh) on a build machine WITHOUT a GPU: builds the
# Vulkan-enabled binaries (offline: Burn's `vulkan` feature downloads nothing), strips and
# compresses them into .gpu/ (about 11 MB each with xz; the device tool carries at most 64 MiB),
# copies the authors' reference files beside them (../shared does not travel) and fetches the
# Vulkan loader packages into .gl/ as the device tool's README describes.
#
#   scripts/gpu-prep.sh            # then run scripts/gpu-check.sh on the GPU machine, carrying
#                                  # .gpu and .gl
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo '/.gl/' >> .git/info/exclude
rm -rf .gpu && mkdir -p .gpu/reference

cargo build --release --features vulkan --bin induce --example reference_parity --example bench
models_test=$(cargo test --release -p induce-models --features induce-models/vulkan --no-run \
  --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") \
       and m["target"]["name"] == "induce_models" and m["profile"]["test"]:
        print(m["executable"])' | tail -1)
test -x "$models_test" || { echo "no induce-models test binary"; exit 1; }
for b in target/release/induce target/release/examples/reference_parity \
         target/release/examples/bench "$models_test"; do
  name=$(basename "$b" | sed 's/-[0-9a-f]\{16\}$//')
  [ "$name" = induce_models ] && name=models-tests
  strip -o ".gpu/$name" "$b"
  xz -T2 -6 -f ".gpu/$name"
done
ref=${INDUCE_SHARED:-../shared}/reference
cp "$ref"/syn{1,4,5}.npz "$ref"/syn{1,4,5}_gcn.safetensors "$ref"/syn{1,4,5}_policy.safetensors \
   "$ref"/syn{1,4,5}_inductive_expected.json .gpu/reference/
if [ ! -d .gl ] || ! ls .gl/*.deb >/dev/null 2>&1; then
  mkdir -p .gl /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update >/dev/null
  (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0)
fi
du -sh .gpu .gl

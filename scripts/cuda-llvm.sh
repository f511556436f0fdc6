#!/usr/bin/env bash
# Makes `cargo build --release --features cuda` work offline-from-GitHub on a machine without a
# CUDA toolkit. Burn 0.22.1's `cuda` feature pulls cubecl-cuda -> cubecl-llvm, whose build
# dependency tracel-llvm-bundler downloads an LLVM 23 bundle from GitHub unless its sentinel file
# `~/.local/share/tracel/tracel-llvm-23.1.0-4/.tracel-llvm-installed` exists; afterwards it only
# runs `<that dir>/bin/llvm-config`. PyPI ships LLVM 23.1.1 as relocatable static libraries
# (`mlc-llvm-static`, plus `mlc-llvm-static-extra-targets` for NVPTX): this script installs them
# into a persistent venv, links that LLVM as the bundler's directory and lays the sentinel.
# PTX is generated in-process by LLVM, so building needs no CUDA toolkit; running needs the
# NVIDIA driver and CUDA runtime libraries (present on the GPU machines).
#
#   scripts/cuda-llvm.sh && cargo build --release --features cuda
#
# Environment: INDUCE_LLVM_VENV (default ~/.local/share/induce/llvm-venv), PYTHON (python3).
set -euo pipefail
venv=${INDUCE_LLVM_VENV:-$HOME/.local/share/induce/llvm-venv}
bundle=$HOME/.local/share/tracel/tracel-llvm-23.1.0-4
py=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
if ! "$venv/bin/python" -m pip show --quiet mlc-llvm-static mlc-llvm-static-extra-targets \
    >/dev/null 2>&1; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    'mlc-llvm-static==23.1.1.post0' 'mlc-llvm-static-extra-targets==23.1.1.post0'
fi
root=$("$venv/bin/python" -c \
  'import mlc_llvm_static, os; print(os.path.join(os.path.dirname(mlc_llvm_static.__file__), "static"))')
test -x "$root/bin/llvm-config" || { echo "no llvm-config under $root" >&2; exit 1; }
ls "$root"/lib/libLLVMNVPTXCodeGen.a > /dev/null || { echo "NVPTX target missing in $root" >&2; exit 1; }
mkdir -p "$(dirname "$bundle")"
# Change nothing that is already in place: the LLVM build script watches these paths, and a new
# link or sentinel time rebuilds the whole CubeCL/CUDA stack (10+ minutes on 2 cores).
if [ -e "$bundle" ] && [ ! -L "$bundle" ]; then
  echo "$bundle exists and is not our link; leaving it as it is" >&2
elif [ "$(readlink "$bundle" 2>/dev/null)" != "$root" ]; then
  ln -sfn "$root" "$bundle"
fi
[ -e "$bundle/.tracel-llvm-installed" ] || touch "$bundle/.tracel-llvm-installed"
echo "LLVM $("$bundle/bin/llvm-config" --version) at $bundle (-> $root)"

#!/usr/bin/env bash
# Feature counterfactuals (issue 60; docs/RESULTS.md, "Feature edits"): greedy with edge edits
# alone (--edits both), feature edits alone (--edits feat) and both (--edits add,del,feat), and
# the peer CF-GNNFeatures (a gradient mask zeroing feature entries), on the same sampled test
# targets of Cora and CiteSeer (the paper's GCN recipe and the four PyG families of
# scripts/pyg-train-cora.py) and of Amazon-Photo (its largest component, the paper's GCN); then
# continuous features: a generated ogbn-arxiv-like graph's 2-hop cut (128 Gaussian features) with
# the paper's GCN, greedy's feature edits at 2, 3 (the default), 5 and 9 quantile levels; then
# InduCE's policy with feature actions (`--edits feat` and `--edits add,del,feat`: trained with the
# recommended recipe on 150 sampled training targets, judging up to 2,048 candidates per state as
# the recipe did when these rows were measured, then its argmax on the same test targets);
# then one table (scripts/feature-table.py).
#
# Usage: scripts/feature-runs.sh [INDUCE_BIN] [OUT_DIR]
#   INDUCE_BIN  the induce binary [default: target/release/induce]
#   OUT_DIR     where the run directories go [default: runs/features]
#   FEATURE_LIMIT=DIR where scripts/limit-runs.sh put its black boxes [default: runs/limit]:
#     DIR/{cora,citeseer}-bb (the paper's GCN recipe) and DIR/pyg-{cora,citeseer}/<model>
#     (LIMIT_PYG=...); a missing one is skipped, saying so.
#   FEATURE_AMAZON=DIR the Amazon-Photo run directory of docs/RESULTS.md's Amazon section
#     [default: runs]: DIR/amazon-lcc.npz and DIR/amazon-lcc-bb; skipped when missing.
#   FEATURE_TARGETS=N sampled test targets per graph [default: 60; Amazon: 30].
#   FEATURE_POLICY_ALL=1 train InduCE's policy with feature actions for every model [default:
#     the paper's GCN and the PyG GCN of each graph, and the continuous graph's; not Amazon].
#
# Every run is seeded (--seed's default, 42): counts, sizes and evaluations are reproducible; the
# seconds are this machine's. A run whose --out already holds a summary.json is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/induce}
out=${2:-runs/features}
lim=${FEATURE_LIMIT:-runs/limit}
amz=${FEATURE_AMAZON:-runs}
n=${FEATURE_TARGETS:-60}
real=../shared/datasets/cora-citeseer-npz
test -x "$bin" || { echo "no induce binary at $bin (cargo build --release --bin induce)"; exit 1; }
mkdir -p "$out"
run() {
  local o="" prev="" a
  for a in "$@"; do [ "$prev" = --out ] && o=$a; prev=$a; done
  if [ -n "$o" ] && [ -s "$o/summary.json" ]; then echo "= kept $o" >&2; return; fi
  echo "+ induce $*" >&2
  "$bin" "$@" --no-progress >"$o.log" 2>&1 || { echo "failed: see $o.log" >&2; return 1; }
}
# The three searches of one model on its targets and the peer: $1 the run name, the rest its
# data flags; greedy also gets the flags of the array `searched` (empty unless set).
searched=()
three() {
  local name=$1
  shift
  local g=("$@" --method greedy ${searched[@]+"${searched[@]}"})
  run explain "${g[@]}" --edits both --out "$out/$name-edges"
  run explain "${g[@]}" --edits feat --out "$out/$name-feat"
  run explain "${g[@]}" --edits add,del,feat --out "$out/$name-both"
  run explain "$@" --method cf-gnnfeatures --edits feat --out "$out/$name-cfgf"
}
# InduCE's policy on one model, words alone and with edges: $1 the run name, $2 whether to run it
# (1 or 0), the rest the data flags (without --targets and --sample); its test targets are the
# searches' ($psample of them, default $n).
policy() {
  local name=$1 on=$2 e s
  shift 2
  [ "$on" = 1 ] || [ "${FEATURE_POLICY_ALL:-0}" = 1 ] || return 0
  for e in feat add,del,feat; do
    s=${e/add,del,feat/both}
    test -s "$out/$name-policy-$s/policy.bpk" ||
      run train "$@" --sample 150 --max-judged 2048 --edits "$e" --out "$out/$name-policy-$s"
    run explain "$@" --targets test --sample "${psample:-$n}" --method inductive \
      --policy "$out/$name-policy-$s" --edits "$e" --out "$out/$name-ind-$s"
    # The gradient's argmax at the policy's cost: one verdict per edit.
    run explain "$@" --targets test --sample "${psample:-$n}" --method greedy --shortlist 1 \
      --edits "$e" --out "$out/$name-sl1-$s"
  done
}
for g in cora citeseer; do
  if [ -s "$lim/$g-bb/black_box.bpk" ] && [ -d "$real" ]; then
    three "$g-paper-gcn" --data "$real/$g.npz" --black-box "$lim/$g-bb" --targets test --sample "$n"
    policy "$g-paper-gcn" 1 --data "$real/$g.npz" --black-box "$lim/$g-bb"
  else
    echo "no $lim/$g-bb or $real: skipping $g's paper GCN" >&2
  fi
  for m in gcn sage gin gat; do
    p=$lim/pyg-$g
    if [ -s "$p/$m/model.safetensors" ]; then
      three "$g-pyg-$m" --data "$p/$g.npz" --black-box "$p/$m/model.safetensors" \
        --arch "$p/$m/arch.json" --targets test --sample "$n"
      policy "$g-pyg-$m" "$([ $m = gcn ] && echo 1 || echo 0)" --data "$p/$g.npz" \
        --black-box "$p/$m/model.safetensors" --arch "$p/$m/arch.json"
    else
      echo "no $p/$m: skipping $g's PyG $m (LIMIT_PYG=python scripts/limit-runs.sh)" >&2
    fi
  done
done
if [ -s "$amz/amazon-lcc.npz" ] && [ -s "$amz/amazon-lcc-bb/black_box.bpk" ]; then
  # Exhaustive greedy over Amazon's edge actions costs thousands of evaluations a step: the
  # bounded greedy (--shortlist 64: the 64 edge and the 64 feature actions a first-order
  # estimate ranks first, each step) there.
  d=(--data "$amz/amazon-lcc.npz" --black-box "$amz/amazon-lcc-bb" --targets test
    --sample "${FEATURE_AMAZON_TARGETS:-30}")
  searched=(--shortlist 64)
  three amazon-paper-gcn "${d[@]}"
  searched=()
else
  echo "no $amz/amazon-lcc.npz or $amz/amazon-lcc-bb: skipping Amazon-Photo" >&2
fi
# Continuous features: arxiv-like (seed 42), its 2-hop cut around the seeded centre (664 nodes,
# 128 continuous features, 40 classes), the paper's GCN recipe (1,000 epochs, 1.3 s).
c=$out/continuous
mkdir -p "$c"
test -s "$c/arxiv.npz" || "$bin" data generate --kind arxiv-like --out "$c/arxiv.npz"
test -s "$c/arxiv-2hop.npz" || "$bin" data subgraph --data "$c/arxiv.npz" --hops 2 --out "$c/arxiv-2hop.npz"
test -s "$c/arxiv-2hop-bb/black_box.bpk" ||
  "$bin" train-black-box --data "$c/arxiv-2hop.npz" --out "$c/arxiv-2hop-bb" --no-progress
arx=(--data "$c/arxiv-2hop.npz" --black-box "$c/arxiv-2hop-bb" --targets test --sample 40)
three arxiv2hop-paper-gcn "${arx[@]}"
psample=40 policy arxiv2hop-paper-gcn 1 "${arx[@]::4}"
for k in 2 5 9; do
  run explain "${arx[@]}" --method greedy --edits feat --feature-quantiles "$k" \
    --out "$out/arxiv2hop-paper-gcn-feat-q$k"
done
# exact over the words alone at 2 and 5 levels (half the targets, sizes up to 2).
for k in 2 5; do
  run explain "${arx[@]}" --shard 1/2 --method exact --max-size 2 --max-evaluations 300000 \
    --edits feat --feature-quantiles "$k" --out "$out/exact-arxiv2hop-feat-q$k"
done
python3 scripts/feature-table.py "$out"

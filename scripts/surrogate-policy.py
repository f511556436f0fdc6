#!/usr/bin/env python3
"""A model without gradients, its policy trained on a surrogate (issue 58): training through a
callback judges every candidate with a whole forward pass of the called model, hours for the
recipe (docs/RESULTS.md). Here the called model only labels the graph: a native GCN
(`induce train-black-box`) learns its predictions, the recipe trains the policy on that surrogate
on the targeted state (whose features need only class probabilities), and the policy then explains
the called model itself, its argmax against greedy, both called back, on the same test nodes.
Prints a Markdown row.

    python scripts/pyg-train-cora.py ../shared/datasets/cora-citeseer-npz/cora.npz runs/pyg-cora \
        --families added                      # GATv2Conv among the added families
    python scripts/surrogate-policy.py runs/pyg-cora --model gatv2 --targets 60

Needs torch, torch_geometric, safetensors, the `induce` package (pip install ./crates/python) and
the `induce` binary (INDUCE_BIN, default target/release/induce).
"""

import argparse
import importlib.util
import os
import subprocess
import time

import numpy as np
import torch

import induce

HERE = os.path.dirname(os.path.abspath(__file__))


def callback_policy():
    """scripts/callback-policy.py as a module: its loading and comparing helpers."""
    spec = importlib.util.spec_from_file_location("callback_policy", os.path.join(HERE, "callback-policy.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", help="the output folder of scripts/pyg-train-cora.py")
    ap.add_argument("--graph", default="cora.npz")
    ap.add_argument("--model", default="gatv2")
    ap.add_argument("--targets", type=int, default=60, help="the first N test nodes")
    ap.add_argument("--out", default=None, help="the surrogate's folder [default: DIR/MODEL-surrogate]")
    a = ap.parse_args()
    bin_ = os.environ.get("INDUCE_BIN", os.path.join(HERE, "..", "target", "release", "induce"))
    cb = callback_policy()
    g, x, ei, hops, called = cb.load_called(a.dir, a.graph, a.model)
    out = a.out or os.path.join(a.dir, f"{a.model}-surrogate")
    os.makedirs(out, exist_ok=True)
    # The graph labelled by the called model: what the surrogate learns.
    labelled = os.path.join(out, "labelled.npz")
    pred = called(x, ei).argmax(1).numpy().astype(g["labels"].dtype)
    arrays = {k: g[k] for k in g.files}
    arrays["labels"] = pred
    np.savez(labelled, **arrays)
    run = lambda *args: subprocess.run([bin_, *args, "--no-progress"], check=True,
                                       stdout=subprocess.DEVNULL)
    t0 = time.perf_counter()
    if not os.path.exists(os.path.join(out, "bb", "black_box.bpk")):
        run("train-black-box", "--data", labelled, "--out", os.path.join(out, "bb"))
    t_bb = time.perf_counter() - t0
    policy = os.path.join(out, "policy")
    t0 = time.perf_counter()
    if not os.path.exists(os.path.join(policy, "policy.bpk")):
        # The targeted state (no gradients at inference), the called model's action radius.
        run("train", "--data", labelled, "--black-box", os.path.join(out, "bb"),
            "--state", "targeted", "--hops", str(hops + 1), "--out", policy)
    t_policy = time.perf_counter() - t0
    bb = os.path.join(out, "bb", "black_box.bpk")
    sur = induce.predict(bb, x, ei).argmax(1)
    agree = float(np.mean(sur == pred))
    test = [int(i) for i in g["test_idx"][: a.targets]]
    greedy, pol, common, seconds = cb.greedy_and_policy(called, hops, x, ei, test, policy)
    # An independent check: each of the policy's counterfactuals applied to the whole graph in
    # torch, the called model's prediction read there.
    flips = 0
    for e in (r for r in pol if r.is_counterfactual):
        pairs = {tuple(sorted(p)) for p in ei.t().tolist()}
        pairs |= {tuple(sorted(p)) for p in e.added}
        pairs -= {tuple(sorted(p)) for p in e.removed}
        und = torch.tensor(sorted(pairs), dtype=ei.dtype).t()
        edited = torch.cat([und, und.flip(0)], 1)
        flips += int(called(x, edited)[e.target].argmax()) != e.original_label
    size = lambda rs: np.mean([rs[i].size for i in common]) if common else float("nan")
    ev = lambda rs: np.mean([r.evaluations or 0 for r in rs])
    print(f"surrogate: {t_bb:.0f} s, agrees with the called model on {agree:.1%} of the nodes; "
          f"policy: {t_policy:.0f} s")
    print(f"whole-graph replay in torch: {flips} of the policy's "
          f"{sum(r.is_counterfactual for r in pol)} counterfactuals flip the called model")
    print("| model (callback) | greedy found | inductive found (of greedy's) | sizes on common (own / greedy) "
          "| evaluations / target (inductive / greedy) | s / target (inductive / greedy) |")
    print("|---|---|---|---|---|---|")
    print(f"| {a.model} | {sum(r.is_counterfactual for r in greedy)}/{len(test)} "
          f"| {sum(r.is_counterfactual for r in pol)}/{len(test)} ({len(common)}) "
          f"| {size(pol):.2f} / {size(greedy):.2f} | {ev(pol):.1f} / {ev(greedy):.0f} "
          f"| {seconds['inductive']:.3f} / {seconds['greedy']:.3f} |")


if __name__ == "__main__":
    main()

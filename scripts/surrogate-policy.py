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
from safetensors.torch import load_file

import induce
from induce._torch import receptive_hops

HERE = os.path.dirname(os.path.abspath(__file__))


def trainer():
    spec = importlib.util.spec_from_file_location("pyg_train", os.path.join(HERE, "pyg-train-cora.py"))
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
    t = trainer()
    path = os.path.join(a.dir, a.graph)
    g = np.load(path)
    x, ei = torch.from_numpy(g["features"]), torch.from_numpy(g["edge_index"])
    c = int(g["labels"].max()) + 1
    model = next(m for name, m, _ in t.models(x.shape[1], c, families=(a.model,)) if name == a.model)
    model.load_state_dict(load_file(os.path.join(a.dir, a.model, "model.safetensors")))
    model.eval()
    hops = receptive_hops(model)

    def called(xx, ee):
        with torch.no_grad():
            return model(xx, ee)

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
    rows = {}
    for method, extra in (("greedy", {}), ("inductive", {"policy": policy})):
        ex = induce.Explainer(model=called, layers=hops, method=method, **extra)
        t0 = time.perf_counter()
        res = list(ex(x, ei, index=test))
        rows[method] = (res, (time.perf_counter() - t0) / len(test))
    greedy, pol = rows["greedy"][0], rows["inductive"][0]
    common = [i for i, (p, q) in enumerate(zip(pol, greedy)) if p.is_counterfactual and q.is_counterfactual]
    size = lambda rs: np.mean([rs[i].size for i in common]) if common else float("nan")
    ev = lambda rs: np.mean([r.evaluations or 0 for r in rs])
    print(f"surrogate: {t_bb:.0f} s, agrees with the called model on {agree:.1%} of the nodes; "
          f"policy: {t_policy:.0f} s")
    print("| model (callback) | greedy found | inductive found (of greedy's) | sizes on common (own / greedy) "
          "| evaluations / target (inductive / greedy) | s / target (inductive / greedy) |")
    print("|---|---|---|---|---|---|")
    print(f"| {a.model} | {sum(r.is_counterfactual for r in greedy)}/{len(test)} "
          f"| {sum(r.is_counterfactual for r in pol)}/{len(test)} ({len(common)}) "
          f"| {size(pol):.2f} / {size(greedy):.2f} | {ev(pol):.1f} / {ev(greedy):.0f} "
          f"| {rows['inductive'][1]:.3f} / {rows['greedy'][1]:.3f} |")


if __name__ == "__main__":
    main()

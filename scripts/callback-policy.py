#!/usr/bin/env python3
"""A model without gradients (issue 58): a PyG model called back from Python (`model=lambda x, ei:
m(x, ei)`, `layers=` its hops), an inductive policy trained through the callback with
`induce.train_policy` (the recipe falls back to the targeted state: no gradients), then on the same
test nodes the policy's argmax (`inductive`) against greedy, both called back. Prints a Markdown
row: found, mean sizes on the common targets, evaluations per target, training seconds.

    python scripts/pyg-train-cora.py ../shared/datasets/cora-citeseer-npz/cora.npz runs/pyg-cora \
        --families added
    python scripts/callback-policy.py runs/pyg-cora --model gatv2 --train 50 --passes 5 --targets 60

Needs torch, torch_geometric, safetensors and the `induce` package (pip install ./crates/python).
"""

import argparse
import importlib.util
import os
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


def load_called(folder, graph, name):
    """The graph of `pyg-train-cora.py`'s FOLDER/GRAPH and its model NAME as a callable without
    gradients: `(arrays, x, edge_index, hops, called)`."""
    t = trainer()
    g = np.load(os.path.join(folder, graph))
    x, ei = torch.from_numpy(g["features"]), torch.from_numpy(g["edge_index"])
    c = int(g["labels"].max()) + 1
    model = next(m for n, m, _ in t.models(x.shape[1], c, families=(name,)) if n == name)
    model.load_state_dict(load_file(os.path.join(folder, name, "model.safetensors")))
    model.eval()

    def called(xx, ee):
        with torch.no_grad():
            return model(xx, ee)

    return g, x, ei, receptive_hops(model), called


def greedy_and_policy(called, hops, x, ei, test, policy):
    """greedy and the policy's argmax (`inductive`) on the called model's `test` nodes:
    `(greedy's results, the policy's, indices both explain, seconds per target by method)`."""
    rows, seconds = {}, {}
    for method, extra in (("greedy", {}), ("inductive", {"policy": policy})):
        ex = induce.Explainer(model=called, layers=hops, method=method, **extra)
        t0 = time.perf_counter()
        rows[method] = list(ex(x, ei, index=test))
        seconds[method] = (time.perf_counter() - t0) / len(test)
    greedy, pol = rows["greedy"], rows["inductive"]
    common = [i for i, (p, q) in enumerate(zip(pol, greedy)) if p.is_counterfactual and q.is_counterfactual]
    return greedy, pol, common, seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", help="the output folder of scripts/pyg-train-cora.py")
    ap.add_argument("--graph", default="cora.npz")
    ap.add_argument("--model", default="gatv2")
    ap.add_argument("--train", type=int, default=50, help="training nodes (the first N train nodes)")
    ap.add_argument("--passes", type=int, default=5, help="training passes (episodes)")
    ap.add_argument("--targets", type=int, default=60, help="the first N test nodes")
    ap.add_argument("--out", default=None, help="the policy's folder [default: DIR/MODEL-callback-policy]")
    a = ap.parse_args()
    g, x, ei, hops, called = load_called(a.dir, a.graph, a.model)
    out = a.out or os.path.join(a.dir, f"{a.model}-callback-policy")
    train = [int(i) for i in g["train_idx"][: a.train]]
    test = [int(i) for i in g["test_idx"][: a.targets]]
    t0 = time.perf_counter()
    info = induce.train_policy(called, x, ei, index=train, out=out, layers=hops, episodes=a.passes)
    trained = time.perf_counter() - t0
    greedy, policy, common, seconds = greedy_and_policy(called, hops, x, ei, test, out)
    size = lambda rs: np.mean([rs[i].size for i in common]) if common else float("nan")
    ev = lambda rs: np.mean([r.evaluations or 0 for r in rs])
    print("| model (callback) | training | greedy found | inductive found | sizes on common (own / greedy) "
          "| evaluations / target (inductive / greedy) | s / target (inductive / greedy) |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {a.model} | {a.train} nodes × {a.passes} passes, {info['seconds']:.0f} s ({trained:.0f} s wall) "
          f"| {sum(r.is_counterfactual for r in greedy)}/{len(test)} "
          f"| {sum(r.is_counterfactual for r in policy)}/{len(test)} "
          f"| {size(policy):.2f} / {size(greedy):.2f} | {ev(policy):.1f} / {ev(greedy):.0f} "
          f"| {seconds['inductive']:.3f} / {seconds['greedy']:.3f} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Callback against native: the same PyG models explained through `induce.Explainer` twice, once
converted in memory (native) and once called back into torch (`model=lambda x, ei: m(x, ei)`,
`layers=` the module's hops), on the same targets with the same method. Prints a Markdown table: seconds per
target for each path, their ratio, and whether the two found the same counterfactuals.

    python scripts/pyg-train-cora.py ../shared/datasets/cora-citeseer-npz/cora.npz runs/pyg-cora
    python scripts/callback-overhead.py runs/pyg-cora --graph cora.npz --targets 20

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", help="the output folder of scripts/pyg-train-cora.py")
    ap.add_argument("--graph", default="cora.npz")
    ap.add_argument("--targets", type=int, default=20, help="the first N test nodes")
    ap.add_argument("--method", default="greedy")
    ap.add_argument("--edits", default=None,
                    help="induce's edits option, e.g. feat (the feature edits of issue 60)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads [default: torch's]")
    ap.add_argument("--families", default="gcn,sage,gin,gat",
                    help="comma list of the trained models, or `added` (pyg-train-cora.py's)")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    t = trainer()
    g = np.load(os.path.join(a.dir, a.graph))
    x, ei = torch.from_numpy(g["features"]), torch.from_numpy(g["edge_index"])
    targets = [int(i) for i in g["test_idx"][: a.targets]]
    c = int(g["labels"].max()) + 1
    print(f"| model | native s/target | callback s/target | ratio | same records |")
    print(f"|---|---|---|---|---|")
    families = t.ADDED if a.families == "added" else tuple(a.families.split(","))
    for name, model, _arch in t.models(x.shape[1], c, families=families):
        model.load_state_dict(load_file(os.path.join(a.dir, name, "model.safetensors")))
        model.eval()
        extra = {"edits": a.edits} if a.edits else {}
        native = induce.Explainer(model=model, method=a.method, **extra)
        t0 = time.perf_counter()
        rn = native(x, ei, index=targets)
        tn = (time.perf_counter() - t0) / len(targets)
        assert native.notes and native.notes[0].startswith("recognised"), native.notes
        # The callback gets the module's hops (a K-hop propagation counts K).
        hops = receptive_hops(model)
        called = induce.Explainer(model=lambda xx, ee: model(xx, ee), method=a.method,
                                  layers=hops, **extra)
        t0 = time.perf_counter()
        rc = called(x, ei, index=targets)
        tc = (time.perf_counter() - t0) / len(targets)
        same = sum((p.found, p.added, p.removed, p.feature_edits)
                   == (q.found, q.added, q.removed, q.feature_edits)
                   for p, q in zip(rn, rc))
        found = sum(e.is_counterfactual for e in rc)
        print(f"| {name} | {tn:.3f} | {tc:.3f} | {tc / tn:.1f}× | {same}/{len(targets)} "
              f"(callback found {found}) |")


if __name__ == "__main__":
    main()

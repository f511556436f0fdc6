#!/usr/bin/env python3
"""Independent check of the runs on scripts/pyg-train-cora.py's models: every found
counterfactual of RUN/explanations.jsonl (each --runs pattern with {m} the model; default
ex-{m}) is replayed in PyG itself (the model rebuilt in torch_geometric, its state_dict loaded,
one full forward pass of the whole edited graph, its feature edits applied) and must flip the target's prediction as
recorded.

    cd runs/pyg-cora && python ../../scripts/pyg-replay-cora.py     # needs torch + PyG
    cd runs/pyg-citeseer && python ../../scripts/pyg-replay-cora.py --graph citeseer.npz \
        --runs 'greedy-{m}' 'transductive-{m}'                      # run directories, {m}: model
        [--models gin]                                              # only these models
"""
import argparse
import json

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from torch_geometric.nn import GATConv, GCNConv, GINConv, SAGEConv

ap = argparse.ArgumentParser()
ap.add_argument("--graph", default="cora.npz")
ap.add_argument("--runs", nargs="+", default=["ex-{m}"])
ap.add_argument("--models", nargs="+", default=["gcn", "sage", "gin", "gat"],
                help="the models to replay (default: all four)")
args = ap.parse_args()
g = np.load(args.graph)
x, ei = torch.tensor(g["features"]), g["edge_index"]
d, c = x.shape[1], int(g["labels"].max()) + 1


def mlp(a, b):
    return torch.nn.Sequential(torch.nn.Linear(a, 16), torch.nn.ReLU(), torch.nn.Linear(16, b))


BUILD = {  # as scripts/pyg-train-cora.py builds them
    "gcn": lambda: ([GCNConv(d, 16), GCNConv(16, c)], F.relu),
    "sage": lambda: ([SAGEConv(d, 16), SAGEConv(16, c)], F.relu),
    "gin": lambda: ([GINConv(mlp(d, 16)), GINConv(mlp(16, c))], F.relu),
    "gat": lambda: ([GATConv(d, 8, heads=8), GATConv(64, c, heads=1)], F.elu),
}


class Net(torch.nn.Module):
    def __init__(self, convs, act):
        super().__init__()
        self.convs, self.act = torch.nn.ModuleList(convs), act

    def forward(self, x, e):
        return self.convs[1](self.act(self.convs[0](x, e)), e).argmax(-1)


pairs0 = {(min(u, v), max(u, v)) for u, v in ei.T.tolist()}
failed = 0
for m, build in BUILD.items():
    if m not in args.models:
        continue
    net = Net(*build())
    net.load_state_dict(load_file(f"{m}/model.safetensors"))
    net.eval()
    ok = bad = 0
    lines = [ln for run in args.runs for ln in open(f"{run.format(m=m)}/explanations.jsonl")]
    with torch.no_grad():
        before = net(x, torch.tensor(ei))
        for line in lines:
            r = json.loads(line)
            if not r["found"]:
                continue
            p = set(pairs0)
            for u, v, kind in r["edits"]:
                q = (min(u, v), max(u, v))
                p.add(q) if kind == "add" else p.remove(q)
            src = [u for u, v in p] + [v for u, v in p]
            dst = [v for u, v in p] + [u for u, v in p]
            xe = x.clone()  # feature edits: [node, feature, old, new]
            for node, f, _, new in r.get("feature_edits", []):
                xe[node, f] = new
            after = int(net(xe, torch.tensor([src, dst]))[r["target"]])
            t0 = int(before[r["target"]])
            good = t0 == r["original_label"] and after == r["new_label"] != t0
            ok, bad = ok + good, bad + (not good)
    failed += bad
    print(f"{m}: {ok} found counterfactuals flip in PyG as recorded, {bad} do not")
raise SystemExit(1 if failed else 0)

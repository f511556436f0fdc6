#!/usr/bin/env python3
"""Trains a GCN, a GraphSAGE, a GIN and a GAT on a gnn-benchmark graph (Cora, CiteSeer) in
PyTorch Geometric and saves each for
`induce explain --black-box OUT/<model>/model.safetensors --arch OUT/<model>/arch.json`.

Needs torch, torch_geometric, safetensors and numpy (see scripts/pyg-fixtures.py). Usage:

    python scripts/pyg-train-cora.py ../shared/datasets/cora-citeseer-npz/cora.npz runs/pyg-cora
    python scripts/pyg-train-cora.py ../shared/datasets/cora-citeseer-npz/citeseer.npz \
        runs/pyg-citeseer

Writes OUT/<graph>.npz (cora.npz, citeseer.npz: the graph in induce's reference layout, self
loops dropped, with the seeded 80/20 split the models were trained on, so `induce` explains the
same split), and per model OUT/<model>/{model.safetensors, arch.json, accuracy.json}. Seeded
(--seed, default 0); CPU.
"""

import argparse
import json
import os
import time

import numpy as np
import torch
from safetensors.torch import save_file
from torch import nn
from torch.nn import functional as F
from torch_geometric.nn import GATConv, GCNConv, GINConv, SAGEConv


def load_gnn_benchmark(path):
    z = np.load(path, allow_pickle=False)

    def csr(prefix):
        data, ind, ptr = z[prefix + "_data"], z[prefix + "_indices"], z[prefix + "_indptr"]
        shape = tuple(z[prefix + "_shape"])
        rows = np.repeat(np.arange(shape[0]), np.diff(ptr))
        return rows, ind, data, shape

    r, c, _, (n, _) = csr("adj")
    pairs = {(min(a, b), max(a, b)) for a, b in zip(r.tolist(), c.tolist()) if a != b}
    pairs = np.array(sorted(pairs), dtype=np.int64)
    fr, fc, fv, (fn, fd) = csr("attr")
    x = np.zeros((fn, fd), dtype=np.float32)
    x[fr, fc] = fv
    return x, pairs, z["labels"].astype(np.int64), n


class Net(nn.Module):
    def __init__(self, convs, act=F.relu, dropout=0.5):
        super().__init__()
        self.convs = nn.ModuleList(convs)
        self.act, self.dropout = act, dropout

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = F.dropout(x, self.dropout, self.training)
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = self.act(x)
        return F.log_softmax(x, dim=-1)


def models(d, c, h=16):
    yield "gcn", Net([GCNConv(d, h), GCNConv(h, c)]), {
        "layers": [{"type": "gcn"}, {"type": "gcn"}], "activation": "relu"}
    yield "sage", Net([SAGEConv(d, h), SAGEConv(h, c)]), {
        "layers": [{"type": "sage"}, {"type": "sage"}], "activation": "relu"}
    mlp = lambda a, b: nn.Sequential(nn.Linear(a, h), nn.ReLU(), nn.Linear(h, b))  # noqa: E731
    yield "gin", Net([GINConv(mlp(d, h)), GINConv(mlp(h, c))]), {
        "layers": [{"type": "gin"}, {"type": "gin"}], "activation": "relu"}
    yield "gat", Net([GATConv(d, 8, heads=8, dropout=0.6), GATConv(64, c, heads=1)], F.elu, 0.6), {
        "layers": [{"type": "gat"}, {"type": "gat"}], "activation": "elu"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph", help="a gnn-benchmark npz (cora.npz, citeseer.npz)")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=200)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    x, pairs, y, n = load_gnn_benchmark(a.graph)
    rng = np.random.default_rng(a.seed)
    perm = rng.permutation(n)
    train, test = np.sort(perm[: int(0.8 * n)]), np.sort(perm[int(0.8 * n):])
    os.makedirs(a.out, exist_ok=True)
    edge_index = np.concatenate([pairs.T, pairs.T[::-1]], axis=1)
    np.savez(os.path.join(a.out, os.path.basename(a.graph)), edge_index=edge_index, features=x, labels=y,
             train_idx=train, test_idx=test)
    xt, ei, yt = torch.tensor(x), torch.tensor(edge_index), torch.tensor(y)
    tr, te = torch.tensor(train), torch.tensor(test)
    c = int(y.max()) + 1
    for name, model, arch in models(x.shape[1], c):
        opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
        t0 = time.time()
        for _ in range(a.epochs):
            model.train()
            opt.zero_grad()
            loss = F.nll_loss(model(xt, ei)[tr], yt[tr])
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            pred = model(xt, ei).argmax(-1)
        acc = {
            "train": float((pred[tr] == yt[tr]).float().mean()),
            "test": float((pred[te] == yt[te]).float().mean()),
            "epochs": a.epochs,
            "seconds": round(time.time() - t0, 1),
        }
        folder = os.path.join(a.out, name)
        os.makedirs(folder, exist_ok=True)
        save_file({k: v.contiguous() for k, v in model.state_dict().items()},
                  os.path.join(folder, "model.safetensors"))
        with open(os.path.join(folder, "arch.json"), "w") as f:
            json.dump(arch, f, indent=2)
            f.write("\n")
        with open(os.path.join(folder, "accuracy.json"), "w") as f:
            json.dump(acc, f, indent=2)
            f.write("\n")
        print(name, acc)


if __name__ == "__main__":
    main()

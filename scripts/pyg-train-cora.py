#!/usr/bin/env python3
"""Trains a GCN, a GraphSAGE, a GIN and a GAT (or, with `--families added`, an SGC, an APPNP, a
TAGConv, a GraphConv, a GATv2Conv and a ChebConv model) on a gnn-benchmark graph (Cora,
CiteSeer) in PyTorch Geometric and saves each for
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
from torch_geometric.nn import (
    APPNP,
    ChebConv,
    GATConv,
    GATv2Conv,
    GCNConv,
    GINConv,
    GraphConv,
    SAGEConv,
    SGConv,
    TAGConv,
)


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
    """The layers `convs` with dropout before each and `act` between them; `acts` (one per
    layer, None for none) overrides `act`; a `Linear` layer takes no edges."""

    def __init__(self, convs, act=F.relu, dropout=0.5, acts=None):
        super().__init__()
        self.convs = nn.ModuleList(convs)
        self.act, self.dropout, self.acts = act, dropout, acts

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = F.dropout(x, self.dropout, self.training)
            x = conv(x) if isinstance(conv, nn.Linear) else conv(x, edge_index)
            if self.acts is not None:
                if self.acts[i] is not None:
                    x = self.acts[i](x)
            elif i < len(self.convs) - 1:
                x = self.act(x)
        return F.log_softmax(x, dim=-1)


#: The four families of the policy issue's measurements (the default set).
FIRST = ("gcn", "sage", "gin", "gat")
#: The families native since issue 59.
ADDED = ("sg", "appnp", "tag", "graph", "gatv2", "cheb")


def models(d, c, h=16, families=FIRST):
    """The untrained models of `families`, with their architecture files."""
    for name, model, arch in all_models(d, c, h):
        if name in families:
            yield name, model, arch


def all_models(d, c, h):
    yield "gcn", Net([GCNConv(d, h), GCNConv(h, c)]), {
        "layers": [{"type": "gcn"}, {"type": "gcn"}], "activation": "relu"}
    yield "sage", Net([SAGEConv(d, h), SAGEConv(h, c)]), {
        "layers": [{"type": "sage"}, {"type": "sage"}], "activation": "relu"}
    mlp = lambda a, b: nn.Sequential(nn.Linear(a, h), nn.ReLU(), nn.Linear(h, b))  # noqa: E731
    yield "gin", Net([GINConv(mlp(d, h)), GINConv(mlp(h, c))]), {
        "layers": [{"type": "gin"}, {"type": "gin"}], "activation": "relu"}
    yield "gat", Net([GATConv(d, 8, heads=8, dropout=0.6), GATConv(64, c, heads=1)], F.elu, 0.6), {
        "layers": [{"type": "gat"}, {"type": "gat"}], "activation": "elu"}
    # SGC (Wu et al. 2019): one SGConv, K = 2.
    yield "sg", Net([SGConv(d, c, K=2)], dropout=0.0), {
        "layers": [{"type": "sg", "k": 2}]}
    # APPNP (Klicpera et al. 2019): an MLP, then K = 10 propagation steps, α = 0.1.
    yield "appnp", Net([nn.Linear(d, 64), nn.Linear(64, c), APPNP(K=10, alpha=0.1)],
                       acts=[F.relu, None, None]), {
        "layers": [{"type": "linear"}, {"type": "linear"}, {"type": "appnp", "k": 10, "alpha": 0.1}],
        "activations": ["relu", "identity", "identity"]}
    yield "tag", Net([TAGConv(d, h, K=2), TAGConv(h, c, K=2)]), {
        "layers": [{"type": "tag"}, {"type": "tag"}], "activation": "relu"}
    yield "graph", Net([GraphConv(d, h), GraphConv(h, c)]), {
        "layers": [{"type": "graph"}, {"type": "graph"}], "activation": "relu"}
    yield "gatv2", Net([GATv2Conv(d, 8, heads=8, dropout=0.6), GATv2Conv(64, c, heads=1)], F.elu,
                       0.6), {
        "layers": [{"type": "gatv2"}, {"type": "gatv2"}], "activation": "elu"}
    yield "cheb", Net([ChebConv(d, h, K=2), ChebConv(h, c, K=2)]), {
        "layers": [{"type": "cheb"}, {"type": "cheb"}], "activation": "relu"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph", help="a gnn-benchmark npz (cora.npz, citeseer.npz)")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--families", default=",".join(FIRST),
                    help=f"comma list of {', '.join(FIRST + ADDED)}, or `added` for "
                         f"{', '.join(ADDED)} [default: {','.join(FIRST)}]")
    a = ap.parse_args()
    families = ADDED if a.families == "added" else tuple(a.families.split(","))
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
    for name, model, arch in models(x.shape[1], c, families=families):
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

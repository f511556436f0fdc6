#!/usr/bin/env python3
"""Writes the PyG parity fixtures under tests/fixtures/pyg/ (committed; the Rust tests need no torch).

Needs torch, torch_geometric, safetensors and numpy:

    python3 -m venv /tmp/pyg && /tmp/pyg/bin/pip install torch torch_geometric safetensors numpy
    /tmp/pyg/bin/python scripts/pyg-fixtures.py

For each case it builds a small PyG model of one layer family (random weights, eval mode) on a
small random undirected graph and writes, in tests/fixtures/pyg/<case>/:

* model.safetensors  -- `safetensors.torch.save_file(model.state_dict(), ...)`, as a user would;
* arch.json          -- the architecture file `induce --arch` reads (docs/FORMATS.md);
* graph.npz          -- the graph in the reference layout (edge_index [2, E] both directions,
                        features, random labels with every class present, train_idx / test_idx);
* expected.safetensors -- PyG's output on the graph (`log_probs`, [n, C]: log_softmax of the
                        model's output) and on the graph with a few edges toggled
                        (`log_probs_edited`, with the toggled pairs in `toggled` [k, 2]).

The torch and PyG versions are recorded in tests/fixtures/pyg/VERSIONS.
"""

import json
import os
import sys

import numpy as np
import torch
import torch_geometric
from safetensors.torch import save_file, save_model
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

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "pyg")


class Net(nn.Module):
    """convs.0 .. convs.L-1, an activation between them, an optional Linear head `lin`.
    `acts` (one per layer, None for none) overrides `act`; a `Linear` layer takes no edges."""

    def __init__(self, convs, act, head=None, act_last=False, acts=None):
        super().__init__()
        self.convs = nn.ModuleList(convs)
        self.act = act
        self.lin = head
        self.act_last = act_last
        self.acts = acts

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x) if isinstance(conv, nn.Linear) else conv(x, edge_index)
            last = i == len(self.convs) - 1
            if self.acts is not None:
                if self.acts[i] is not None:
                    x = self.acts[i](x)
            elif not last or self.act_last:
                x = self.act(x)
        if self.lin is not None:
            x = self.lin(x)
        return F.log_softmax(x, dim=-1)


def random_graph(gen, n, m):
    """An undirected simple graph on n nodes with about m edges; node n-1 stays isolated."""
    pairs = set()
    while len(pairs) < m:
        u, v = torch.randint(0, n - 1, (2,), generator=gen).tolist()
        if u != v:
            pairs.add((min(u, v), max(u, v)))
    pairs = sorted(pairs)
    src = [u for u, v in pairs] + [v for u, v in pairs]
    dst = [v for u, v in pairs] + [u for u, v in pairs]
    return pairs, torch.tensor([src, dst], dtype=torch.long)


def toggle(pairs, toggled):
    s = set(pairs)
    for p in toggled:
        p = (min(p), max(p))
        if p in s:
            s.remove(p)
        else:
            s.add(p)
    s = sorted(s)
    src = [u for u, v in s] + [v for u, v in s]
    dst = [v for u, v in s] + [u for u, v in s]
    return torch.tensor([src, dst], dtype=torch.long)


def scale_params(model, gen, scale):
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * scale)
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(torch.randn(b.shape, generator=gen) * 0.3)
            elif name.endswith("running_var"):
                b.copy_(torch.rand(b.shape, generator=gen) + 0.5)


def cases():
    d, h, c = 6, 8, 3
    yield "gcn", Net([GCNConv(d, h), GCNConv(h, h)], F.relu, nn.Linear(h, c), act_last=True), {
        "layers": [{"type": "gcn"}, {"type": "gcn"}],
        "activation": "relu",
        "head": "lin",
    }
    yield "gcn_plain", Net(
        [GCNConv(d, h, improved=True), GCNConv(h, c, add_self_loops=False, normalize=False)], F.relu
    ), {
        "layers": [
            {"type": "gcn", "improved": True},
            {"type": "gcn", "add_self_loops": False, "normalize": False},
        ],
        "activation": "relu",
    }
    yield "sage", Net([SAGEConv(d, h), SAGEConv(h, c)], F.relu), {
        "layers": [{"type": "sage"}, {"type": "sage"}],
        "activation": "relu",
    }
    yield "sage_sum", Net(
        [SAGEConv(d, h, aggr="sum", normalize=True), SAGEConv(h, c, root_weight=False)], F.elu
    ), {
        "layers": [{"type": "sage", "aggr": "sum", "normalize": True}, {"type": "sage"}],
        "activation": "elu",
    }
    gin1 = GINConv(nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h)), train_eps=True)
    gin2 = GINConv(
        nn.Sequential(nn.Linear(h, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Linear(h, c)), eps=0.25
    )
    yield "gin", Net([gin1, gin2], F.relu), {
        "layers": [
            {"type": "gin", "mlp": ["linear", "relu", "linear"]},
            {"type": "gin", "eps": 0.25, "mlp": ["linear", "batch_norm", "relu", "linear"]},
        ],
        "activation": "relu",
    }
    yield "gat", Net(
        [GATConv(d, 4, heads=3), GATConv(12, c, heads=2, concat=False)], F.elu
    ), {
        "layers": [{"type": "gat"}, {"type": "gat", "concat": False}],
        "activation": "elu",
    }


    # The families added with issue 59: multi-hop propagations (one module, K hops), GraphConv,
    # GATv2Conv, and Linear layers feeding a propagation.
    yield "sg", Net([SGConv(d, h, K=2), SGConv(h, c)], F.relu), {
        "layers": [{"type": "sg", "k": 2}, {"type": "sg"}],
        "activation": "relu",
    }
    yield "appnp", Net(
        [nn.Linear(d, 10), nn.Linear(10, c), APPNP(K=2, alpha=0.5)],
        None,
        acts=[F.relu, None, None],
    ), {
        "layers": [{"type": "linear"}, {"type": "linear"}, {"type": "appnp", "k": 2, "alpha": 0.5}],
        "activations": ["relu", "identity", "identity"],
    }
    yield "tag", Net([TAGConv(d, h, K=2), TAGConv(h, c, K=1, normalize=False)], F.elu), {
        "layers": [{"type": "tag"}, {"type": "tag", "normalize": False}],
        "activation": "elu",
    }
    yield "cheb", Net([ChebConv(d, h, K=3), ChebConv(h, c, K=2)], F.relu), {
        "layers": [{"type": "cheb"}, {"type": "cheb"}],
        "activation": "relu",
    }
    yield "graph", Net([GraphConv(d, h), GraphConv(h, c, aggr="mean")], F.relu), {
        "layers": [{"type": "graph"}, {"type": "graph", "aggr": "mean"}],
        "activation": "relu",
    }
    yield "gatv2", Net(
        [GATv2Conv(d, 4, heads=2), GATv2Conv(8, c, heads=2, concat=False, share_weights=True)],
        F.elu,
    ), {
        "layers": [{"type": "gatv2"}, {"type": "gatv2", "concat": False}],
        "activation": "elu",
    }


def main():
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    n, m = 14, 22
    for k, (name, model, arch) in enumerate(cases()):
        gen = torch.Generator().manual_seed(100 + k)
        pairs, edge_index = random_graph(gen, n, m)
        d = 6
        x = torch.randn(n, d, generator=gen)
        scale_params(model, gen, 0.6)
        model.eval()
        with torch.no_grad():
            lp = model(x, edge_index)
            toggled = [(0, 5), pairs[0], pairs[3], (2, n - 1)]
            lp_edited = model(x, toggle(pairs, toggled))
        folder = os.path.join(OUT, name)
        os.makedirs(folder, exist_ok=True)
        sd = {k2: v.contiguous() for k2, v in model.state_dict().items()}
        # num_batches_tracked is an int64 counter BatchNorm keeps; users' files carry it too.
        if any(getattr(conv, "share_weights", False) for conv in model.modules()):
            # Shared tensors (GATv2Conv(share_weights=True)): `save_model` keeps one name.
            save_model(model, os.path.join(folder, "model.safetensors"))
        else:
            save_file(sd, os.path.join(folder, "model.safetensors"))
        with open(os.path.join(folder, "arch.json"), "w") as f:
            json.dump(arch, f, indent=2)
            f.write("\n")
        # Ground-truth labels: random, every class present (the data's class count is read
        # from them); the model's predictions are `log_probs.argmax(-1)`.
        labels = (torch.randperm(n, generator=gen) % 3).numpy().astype(np.int64)
        np.savez(
            os.path.join(folder, "graph.npz"),
            edge_index=edge_index.numpy().astype(np.int64),
            features=x.numpy().astype(np.float32),
            labels=labels,
            train_idx=np.arange(0, n // 2, dtype=np.int64),
            test_idx=np.arange(n // 2, n, dtype=np.int64),
        )
        save_file(
            {
                "log_probs": lp.contiguous(),
                "log_probs_edited": lp_edited.contiguous(),
                "toggled": torch.tensor([list(p) for p in toggled], dtype=torch.int64),
            },
            os.path.join(folder, "expected.safetensors"),
        )
        pred = lp.argmax(-1).numpy()
        print(f"{name}: {len(pairs)} edges, predicted classes {np.bincount(pred, minlength=3).tolist()}")
    with open(os.path.join(OUT, "VERSIONS"), "w") as f:
        f.write(f"torch {torch.__version__}\ntorch_geometric {torch_geometric.__version__}\n")
        f.write(f"python {sys.version.split()[0]}\nnumpy {np.__version__}\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""PyG models whose receptive field a count of message-passing modules gets wrong, explained
through `induce.Explainer` on PyG's BA-house graph (300 BA nodes + 80 houses, 700 nodes; the
node's degree as a feature beside constants), every counterfactual replayed in PyTorch on the
whole edited graph. Prints a Markdown table: the model, its test accuracy, the receptive-field
note of the run (empty: the per-layer count was right), found / valid in the replay, and seconds
per target, for each method.

    python scripts/pyg-reach.py                      # every model, greedy and transductive
    python scripts/pyg-reach.py --models sgconv readout --methods greedy
    python scripts/pyg-reach.py --csv docs/results/pyg-reach.csv   # the rows also as CSV

Needs torch, torch_geometric and the `induce` package (pip install ./crates/python). Seeded
(--seed, default 0); CPU.
"""

import argparse
import csv
import time

import torch
import torch.nn.functional as F
from torch import nn

import induce


def models(d, c):
    import torch_geometric.nn as g

    class Plain(nn.Module):
        def __init__(self, *convs):
            super().__init__()
            self.convs = nn.ModuleList(convs)

        def forward(self, x, ei):
            for i, conv in enumerate(self.convs):
                x = conv(x, ei)
                if i + 1 < len(self.convs):
                    x = F.relu(x)
            return x

    class Appnp(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin1, self.lin2 = nn.Linear(d, 32), nn.Linear(32, c)
            self.prop = g.APPNP(K=5, alpha=0.1)

        def forward(self, x, ei):
            return self.prop(self.lin2(F.relu(self.lin1(x))), ei)

    class Reused(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.conv, self.out = nn.Linear(d, 32), g.GCNConv(32, 32), nn.Linear(32, c)

        def forward(self, x, ei):
            x = F.relu(self.lin(x))
            for _ in range(3):
                x = F.relu(self.conv(x, ei))
            return self.out(x)

    class Readout(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2, self.head = g.GCNConv(d, 32), g.GCNConv(32, 32), nn.Linear(64, c)

        def forward(self, x, ei):
            h = self.c2(F.relu(self.c1(x, ei)), ei)
            return self.head(torch.cat([h, h.mean(0, keepdim=True).expand_as(h)], 1))

    return {
        "sgconv": lambda: Plain(g.SGConv(d, c, K=3)),
        "appnp": Appnp,
        "tagconv": lambda: Plain(g.TAGConv(d, 32, K=2), g.TAGConv(32, c, K=2)),
        "generalconv": lambda: Plain(g.GeneralConv(d, 32), g.GeneralConv(32, c)),
        "resgated": lambda: Plain(g.ResGatedGraphConv(d, 32), g.ResGatedGraphConv(32, c)),
        "reused": Reused,
        "readout": Readout,
    }


# The CSV's columns: the markdown's, "found/targets / valid" split in three.
CSV_COLUMNS = ["model", "test_accuracy", "receptive_field_note", "method", "found", "targets",
               "valid_in_pytorch", "seconds_per_target"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=None)
    ap.add_argument("--methods", nargs="*", default=["greedy", "transductive"])
    ap.add_argument("--targets", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--csv", help="also write the rows to this CSV file (columns: CSV_COLUMNS)")
    a = ap.parse_args()
    from torch_geometric.datasets import ExplainerDataset
    from torch_geometric.datasets.graph_generator import BAGraph
    from torch_geometric.utils import degree

    torch.manual_seed(a.seed)
    data = ExplainerDataset(graph_generator=BAGraph(num_nodes=300, num_edges=5),
                            motif_generator="house", num_motifs=80)[0]
    n, c = data.num_nodes, int(data.y.max()) + 1
    x = torch.ones(n, 10) + 0.01 * torch.randn(n, 10)
    x[:, 0] = degree(data.edge_index[0], n) / 5.0
    ei = data.edge_index
    perm = torch.randperm(n)
    train, test = perm[: int(0.8 * n)], perm[int(0.8 * n):]
    print("| model | test accuracy | receptive field note | method | found / valid in PyTorch "
          "| s / target |")
    print("|---|---|---|---|---|---|")
    table = None
    if a.csv:
        out = open(a.csv, "w", newline="")
        table = csv.writer(out, lineterminator="\n")
        table.writerow(CSV_COLUMNS)
    for name, make in models(x.shape[1], c).items():
        if a.models and name not in a.models:
            continue
        torch.manual_seed(a.seed)
        m = make()
        opt = torch.optim.Adam(m.parameters(), lr=0.01, weight_decay=5e-4)
        for _ in range(500):
            m.train()
            opt.zero_grad()
            F.cross_entropy(m(x, ei)[train], data.y[train]).backward()
            opt.step()
        m.eval()
        with torch.no_grad():
            pred = m(x, ei).argmax(1)
        acc = float((pred[test] == data.y[test]).float().mean())
        targets = [int(t) for t in test if data.y[t] != 0 and pred[t] == data.y[t]][: a.targets]
        for method in a.methods:
            t0 = time.perf_counter()
            r = induce.Explainer(model=m, method=method, seed=a.seed)(x, ei, index=targets)
            dt = (time.perf_counter() - t0) / len(targets)
            note = next((s for s in r.summary["notes"] if s.startswith("receptive field")), "")
            note = note.split("reach ")[-1].split(":")[0] if note else "as counted"
            found = [e for e in r if e.found]
            valid = 0
            for e in found:
                cf = torch.as_tensor(e.edited_edge_index(ei.numpy()))
                with torch.no_grad():
                    valid += int(m(x, cf)[e.target].argmax()) != int(pred[e.target])
            print(f"| {name} | {acc:.2f} | {note} | {method} | {len(found)}/{len(targets)} / "
                  f"{valid} | {dt:.2f} |", flush=True)
            if table:
                table.writerow([name, f"{acc:.2f}", note, method, len(found), len(targets), valid,
                                f"{dt:.2f}"])
                out.flush()


if __name__ == "__main__":
    main()

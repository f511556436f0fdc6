"""The torch models of the live-model tests (``test_live.py``), shared with the script that
writes their committed weights (``scripts/pyg-live-fixtures.py``): stacks the native path
implements, which are converted in memory, and layer types and shapes it does not, which
therefore run as callbacks."""

import torch
from torch import nn
from torch.nn import functional as F

#: The cases the native path lacks (callbacks).
CALLBACK_CASES = ("transformer", "gin_bn", "jk")
#: The cases converted in memory: the four first families, and those added with issue 59
#: (GATv2Conv, GraphConv, ChebConv K=2, SGConv K=3, an MLP then APPNP K=5, TAGConv K=2).
NATIVE_CASES = ("tutorial_gcn", "basic_sage", "basic_gin", "basic_gat", "gatv2", "graphconv",
                "cheb", "sgconv", "appnp", "tagconv")
#: Cases whose receptive field a count of message-passing modules gets wrong, with what the run
#: must end up judging on: ``None`` where the hops are right without a check (SGConv K=3, APPNP
#: K=5 after an MLP, TAGConv K=2 twice: native, their hops derived; GeneralConv twice: a
#: callback, its hops counted per layer), "widened" where
#: the check must widen it (one GCNConv applied three times), "whole" where only the whole
#: graph is exact (a global mean readout fed to the head, which the converter cannot map).
REACH_CASES = {"sgconv": None, "appnp": None, "tagconv": None, "generalconv": None,
               "reused": "widened", "readout": "whole"}


class TutorialGCN(nn.Module):
    """PyG's introductory GCN: ``conv1``, ``conv2``, ReLU and dropout in ``forward``."""

    def __init__(self, d, h, c):
        from torch_geometric.nn import GCNConv

        super().__init__()
        self.conv1 = GCNConv(d, h)
        self.conv2 = GCNConv(h, c)

    def forward(self, x, edge_index):
        x = F.relu(self.conv1(x, edge_index))
        x = F.dropout(x, training=self.training)
        return F.log_softmax(self.conv2(x, edge_index), dim=1)


class Stack(nn.Module):
    """Two layers of one type with ELU between them."""

    def __init__(self, first, second):
        super().__init__()
        self.first, self.second = first, second

    def forward(self, x, edge_index):
        return self.second(F.elu(self.first(x, edge_index)), edge_index)


class Reused(nn.Module):
    """One ``GCNConv`` applied three times: three hops from one message-passing module."""

    def __init__(self, d, h, c):
        from torch_geometric.nn import GCNConv

        super().__init__()
        self.lin = nn.Linear(d, h)
        self.conv = GCNConv(h, h)
        self.out = nn.Linear(h, c)

    def forward(self, x, edge_index):
        x = F.relu(self.lin(x))
        for _ in range(3):
            x = F.relu(self.conv(x, edge_index))
        return self.out(x)


class Readout(nn.Module):
    """Two ``GCNConv`` layers and the graph's mean embedding beside each node's, fed to a head
    twice as wide as the last layer: every output reads the whole graph."""

    def __init__(self, d, h, c):
        from torch_geometric.nn import GCNConv

        super().__init__()
        self.conv1, self.conv2 = GCNConv(d, h), GCNConv(h, h)
        self.head = nn.Linear(2 * h, c)

    def forward(self, x, edge_index):
        x = self.conv2(F.relu(self.conv1(x, edge_index)), edge_index)
        return self.head(torch.cat([x, x.mean(0, keepdim=True).expand_as(x)], 1))


class Appnp(nn.Module):
    """An MLP, then ``APPNP(K=5)``: one propagation module, five hops."""

    def __init__(self, d, h, c):
        from torch_geometric.nn import APPNP

        super().__init__()
        self.lin1, self.lin2 = nn.Linear(d, h), nn.Linear(h, c)
        self.prop = APPNP(K=5, alpha=0.1)

    def forward(self, x, edge_index):
        return self.prop(self.lin2(F.relu(self.lin1(x))), edge_index)


class Sg(nn.Module):
    """``SGConv(K=3)``: one layer, three hops."""

    def __init__(self, d, c):
        from torch_geometric.nn import SGConv

        super().__init__()
        self.conv = SGConv(d, c, K=3)

    def forward(self, x, edge_index):
        return self.conv(x, edge_index)


def build(case, d, c):
    """The module of ``case`` for ``d`` features and ``c`` classes (random weights)."""
    import torch_geometric.nn as g
    from torch_geometric.nn.models import GAT, GCN, GIN, GraphSAGE

    h = 16
    if case == "gatv2":
        return Stack(g.GATv2Conv(d, 8, heads=2), g.GATv2Conv(16, c, heads=1))
    if case == "transformer":
        return Stack(g.TransformerConv(d, 8, heads=2), g.TransformerConv(16, c))
    if case == "graphconv":
        return Stack(g.GraphConv(d, h), g.GraphConv(h, c))
    if case == "cheb":
        return Stack(g.ChebConv(d, h, K=2), g.ChebConv(h, c, K=2))
    if case == "gin_bn":
        return GIN(d, h, num_layers=2, out_channels=c, norm="batch_norm")
    if case == "jk":
        return GCN(d, h, num_layers=3, out_channels=c, jk="cat")
    if case == "sgconv":
        return Sg(d, c)
    if case == "appnp":
        return Appnp(d, h, c)
    if case == "tagconv":
        return Stack(g.TAGConv(d, h, K=2), g.TAGConv(h, c, K=2))
    if case == "generalconv":
        return Stack(g.GeneralConv(d, h), g.GeneralConv(h, c))
    if case == "reused":
        return Reused(d, h, c)
    if case == "readout":
        return Readout(d, h, c)
    if case == "tutorial_gcn":
        return TutorialGCN(d, h, c)
    if case == "basic_sage":
        return GraphSAGE(d, h, num_layers=2, out_channels=c)
    if case == "basic_gin":
        return GIN(d, h, num_layers=2, out_channels=c)
    if case == "basic_gat":
        return GAT(d, 8, num_layers=2, out_channels=c, heads=2)
    raise ValueError(case)


def load(directory, case):
    """The committed module of ``case`` and its graph ``(module, x, edge_index)``."""
    import numpy as np
    from safetensors.torch import load_file

    g = np.load(directory / "graph.npz")
    x = torch.from_numpy(g["features"])
    ei = torch.from_numpy(g["edge_index"])
    c = int(g["classes"])
    m = build(case, x.shape[1], c)
    m.load_state_dict(load_file(str(directory / f"{case}.safetensors")))
    return m.eval(), x, ei

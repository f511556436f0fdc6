"""The torch models of the live-model tests (``test_live.py``), shared with the script that
writes their committed weights (``scripts/pyg-live-fixtures.py``): layer types and shapes the
native path does not implement, which therefore run as callbacks, and stacks it does, which are
converted in memory."""

import torch
from torch import nn
from torch.nn import functional as F

#: The cases the native path lacks (callbacks).
CALLBACK_CASES = ("gatv2", "transformer", "graphconv", "cheb", "gin_bn", "jk")
#: The cases converted in memory.
NATIVE_CASES = ("tutorial_gcn", "basic_sage", "basic_gin", "basic_gat")


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

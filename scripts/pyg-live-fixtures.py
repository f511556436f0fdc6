#!/usr/bin/env python3
"""Writes the live-model fixtures under tests/fixtures/pyg-live/ (committed): one small random
graph (graph.npz: features, edge_index in both directions, classes) and, for each case of
crates/python/tests/live_models.py, its module's weights after a short fit to random labels
(<case>.safetensors), so that its predictions vary over the graph. A case whose file exists
is kept (``--force`` rewrites every one).

    /tmp/pyg/bin/python scripts/pyg-live-fixtures.py
"""

import os
import sys

import numpy as np
import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "crates", "python", "tests"))
import live_models  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "pyg-live")


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = np.random.default_rng(7)
    n, d, c = 40, 6, 3
    pairs = set()
    while len(pairs) < 70:
        u, v = gen.integers(0, n, 2)
        if u != v:
            pairs.add((min(u, v), max(u, v)))
    one = np.array(sorted(pairs), dtype=np.int64).T
    ei = np.concatenate([one, one[::-1]], axis=1)
    x = gen.normal(size=(n, d)).astype(np.float32)
    y = gen.integers(0, c, n)
    np.savez(os.path.join(OUT, "graph.npz"), features=x, edge_index=ei, classes=np.int64(c))
    xt, eit, yt = torch.from_numpy(x), torch.from_numpy(ei), torch.from_numpy(y)
    cases = live_models.CALLBACK_CASES + live_models.NATIVE_CASES + tuple(live_models.REACH_CASES)
    for case in cases:
        path = os.path.join(OUT, f"{case}.safetensors")
        if os.path.exists(path) and "--force" not in sys.argv:
            continue  # committed: rewritten only with --force
        torch.manual_seed(0)
        m = live_models.build(case, d, c)
        opt = torch.optim.Adam(m.parameters(), lr=0.01)
        for _ in range(100):
            m.train()
            opt.zero_grad()
            out = m(xt, eit)
            torch.nn.functional.cross_entropy(out, yt).backward()
            opt.step()
        m.eval()
        save_file({k: v.contiguous() for k, v in m.state_dict().items()}, path)
        pred = m(xt, eit).argmax(1)
        print(case, "classes predicted:", sorted(set(pred.tolist())))


if __name__ == "__main__":
    main()

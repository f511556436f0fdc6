#!/usr/bin/env python3
"""Independent check that counterfactuals flip the model on the WHOLE graph.

Applies each explanation's edits of a run directory (`explanations.jsonl`) to the whole graph of a
reference npz (`features`, `edge_index` or `adj`) and runs one float64 forward pass of the
authors' 3-layer GCN (`GCNSynthetic`, weights from a safetensors file: `gc{1,2,3}.weight` `[in,
out]`, `lin.weight` `[C, 3 hidden]`), with no code shared with induce. Prints, per method, how
many of the found counterfactuals really flip the prediction, and how many agree with the `valid`
field induce wrote.

    python3 scripts/check_validity.py DATA.npz GCN.safetensors RUN_DIR

Needs numpy and safetensors only (`pip install numpy safetensors`).
"""

import json
import sys
from collections import defaultdict

import numpy as np
from safetensors.numpy import load_file


def load_graph(path):
    z = np.load(path, allow_pickle=False)
    x = np.asarray(z["features"], dtype=np.float64)
    n = x.shape[0]
    if "adj" in z:
        a = np.asarray(z["adj"])
        u, w = np.nonzero(np.triu(a, 1) + np.triu(a.T, 1))
    else:
        e = np.asarray(z["edge_index"])
        u, w = np.minimum(e[0], e[1]), np.maximum(e[0], e[1])
    edges = {(int(a), int(b)) for a, b in zip(u, w) if a != b}
    return x, n, edges


def forward(p, x, n, edges):
    """log_softmax([h1 | h2 | h3] W^T + b), h_k = relu(Â h_{k-1} W_k + b_k) (no relu on h3)."""
    e = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
    src = np.concatenate([e[:, 0], e[:, 1], np.arange(n)])
    dst = np.concatenate([e[:, 1], e[:, 0], np.arange(n)])
    deg = np.bincount(dst, minlength=n).astype(np.float64)
    norm = 1.0 / np.sqrt(deg[src] * deg[dst])

    def conv(h, k):
        hw = h @ p[f"gc{k}.weight"]
        out = np.zeros((n, hw.shape[1]))
        np.add.at(out, dst, hw[src] * norm[:, None])
        return out + p[f"gc{k}.bias"]

    h1 = np.maximum(conv(x, 1), 0)
    h2 = np.maximum(conv(h1, 2), 0)
    h3 = conv(h2, 3)
    z = np.concatenate([h1, h2, h3], axis=1) @ p["lin.weight"].T + p["lin.bias"]
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    x, n, edges = load_graph(sys.argv[1])
    p = {k: v.astype(np.float64) for k, v in load_file(sys.argv[2]).items()}
    before = forward(p, x, n, edges).argmax(axis=1)
    stats = defaultdict(lambda: [0, 0, 0, 0])  # targets, found, valid, agree with induce
    bad = []
    with open(f"{sys.argv[3]}/explanations.jsonl") as f:
        for line in f:
            r = json.loads(line)
            s = stats[r["method"]]
            s[0] += 1
            if not r["found"]:
                continue
            s[1] += 1
            g = set(edges)
            for u, w, kind in r["edits"]:
                pair = (min(u, w), max(u, w))
                if kind == "add":
                    g.add(pair)
                else:
                    g.discard(pair)
            t = r["target"]
            after = forward(p, x, n, g)[t].argmax()
            valid = after != before[t]
            s[2] += valid
            s[3] += r.get("valid") == bool(valid)
            if not valid:
                bad.append((r["method"], t))
    for m, (t, found, valid, agree) in stats.items():
        print(f"{m}: {t} targets, {found} found, {valid} flip the model on the whole graph "
              f"(float64 NumPy); induce's `valid` agrees on {agree}/{found}")
    if bad:
        print("not flipped:", ", ".join(f"{m} {t}" for m, t in bad[:20]))


if __name__ == "__main__":
    main()

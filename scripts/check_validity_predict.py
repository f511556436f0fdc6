#!/usr/bin/env python3
"""Whole-graph check of a sample of a run's counterfactuals through `induce predict`.

For any black box `induce` loads (a .bpk of ours, where `scripts/check_validity.py` needs the
authors' safetensors GCN): draws N found explanations of RUN_DIR (seeded), writes for each a copy
of the reference npz DATA with its edits applied to `edge_index`, and runs `induce predict` (one
forward pass over the whole edited graph, no graph binding, no neighbourhood) on it and on the
unedited graph. Prints, per explanation, the target's class before and after; exits 1 if any does
not flip.

    python3 scripts/check_validity_predict.py DATA.npz BLACK_BOX RUN_DIR [N] [SEED]

Needs numpy and target/release/induce (or $INDUCE_BIN).
"""

import csv
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np


def predict(binary, data, black_box, out):
    subprocess.run(
        [binary, "predict", "--data", data, "--format", "reference", "--black-box", black_box,
         "--no-progress", "--out", out],
        check=True, stdout=subprocess.DEVNULL)
    with open(out) as fh:
        rows = csv.reader(fh)
        next(rows)
        return {int(r[0]): int(r[1]) for r in rows}


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    data, black_box, run = sys.argv[1:4]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 12
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 7
    here = os.path.dirname(os.path.abspath(__file__))
    binary = os.environ.get("INDUCE_BIN", os.path.join(here, "..", "target", "release", "induce"))
    with open(os.path.join(run, "explanations.jsonl")) as fh:
        found = [r for r in map(json.loads, fh) if r["found"]]
    sample = random.Random(seed).sample(found, min(n, len(found)))
    z = np.load(data, allow_pickle=False)
    arrays = {k: z[k] for k in z.files}
    e = arrays["edge_index"]
    base = set(zip(np.minimum(e[0], e[1]).tolist(), np.maximum(e[0], e[1]).tolist()))
    flipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        before = predict(binary, data, black_box, os.path.join(tmp, "before.csv"))
        for i, r in enumerate(sample):
            edges = set(base)
            for a, b, kind in r["edits"]:
                pair = (min(a, b), max(a, b))
                if kind == "add":
                    edges.add(pair)
                else:
                    edges.discard(pair)
            edited = dict(arrays, edge_index=np.array(sorted(edges), dtype=e.dtype).T)
            path = os.path.join(tmp, f"edited-{i}.npz")
            np.savez(path, **edited)
            t = r["target"]
            after = predict(binary, path, black_box, os.path.join(tmp, f"after-{i}.csv"))[t]
            ok = before[t] == r["original_label"] and after != before[t]
            flipped += ok
            print(f"target {t}: {len(r['edits'])} edits, class {before[t]} -> {after} "
                  f"(induce: {r['original_label']} -> {r['new_label']}) "
                  f"{'flips' if ok else 'DOES NOT FLIP'}")
    print(f"{flipped} of {len(sample)} flip the model on the whole graph")
    sys.exit(0 if flipped == len(sample) else 1)


if __name__ == "__main__":
    main()

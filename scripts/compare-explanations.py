#!/usr/bin/env python3
"""Compares two explanations.jsonl files target by target (e.g. the host kernel's and a GPU
run's): how many targets have identical edits, the same edits in another order, the same number
of edits but other edges (the policy chose among candidates its scores tie or nearly tie on, in
another float summation order), or another size; and whether every explanation is valid.

    scripts/compare-explanations.py A/explanations.jsonl B/explanations.jsonl
"""
import json
import sys


def load(path):
    with open(path) as f:
        return {e["target"]: e for e in map(json.loads, f) if e.get("method")}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = load(sys.argv[1]), load(sys.argv[2])
    if a.keys() != b.keys():
        sys.exit(f"different targets: {len(a.keys() - b.keys())} only in A, "
                 f"{len(b.keys() - a.keys())} only in B")
    kinds = {"identical": 0, "same edits, other order": 0, "same size, other edges": 0,
             "other size": 0}
    found = {"A": 0, "B": 0}
    invalid = {"A": 0, "B": 0}
    examples = []
    for t in sorted(a):
        x, y = a[t], b[t]
        for name, e in (("A", x), ("B", y)):
            found[name] += bool(e["found"])
            invalid[name] += e["found"] and e.get("valid") is False
        ex, ey = [tuple(v) for v in x["edits"]], [tuple(v) for v in y["edits"]]
        if ex == ey and x["found"] == y["found"]:
            kinds["identical"] += 1
        elif sorted(ex) == sorted(ey) and x["found"] == y["found"]:
            kinds["same edits, other order"] += 1
        elif len(ex) == len(ey) and x["found"] == y["found"]:
            kinds["same size, other edges"] += 1
            examples.append((t, ex, ey))
        else:
            kinds["other size"] += 1
            examples.append((t, ex, ey))
    print(f"{len(a)} targets; found A {found['A']}, B {found['B']}; "
          f"invalid A {invalid['A']}, B {invalid['B']}")
    for k, v in kinds.items():
        print(f"  {k}: {v}")
    for t, ex, ey in examples[:5]:
        print(f"  target {t}: A {ex}\n  {' ' * (8 + len(str(t)))}B {ey}")


if __name__ == "__main__":
    main()

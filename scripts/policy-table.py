#!/usr/bin/env python3
"""The rows of docs/RESULTS.md "The trained policy at the paper's cost" from the run folders of
`LIMIT_POLICY=1 scripts/limit-runs.sh` (and its PyG rows with LIMIT_PYG): per run, found of the
targets, how many of greedy's, the mean sizes on the targets both explain (own / greedy's),
evaluations per target and the policy's training seconds (train.json's outcome.seconds).

Usage: scripts/policy-table.py [OUT_DIR] [--csv FILE] [--pyg-csv FILE]
  OUT_DIR  the limit runs [default: runs/limit]
"""
import argparse
import csv
import json
import os
import sys


def records(run, method):
    path = os.path.join(run, "explanations.jsonl")
    if not os.path.exists(path):
        return None
    out = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r["method"] == method:
                out[r["target"]] = r
    return out or None


def size(r):
    return len(r["edits"]) + len(r.get("feature_edits", []))


def seconds(policy):
    try:
        with open(os.path.join(policy, "train.json")) as f:
            return round(json.load(f)["outcome"]["seconds"])
    except (OSError, KeyError, ValueError):
        return ""


def row(graph, label, run, method, greedy, policy=None, note=""):
    rs = records(run, method)
    if rs is None:
        return None
    found = [t for t, r in rs.items() if r["found"]]
    common = [t for t in found if greedy.get(t, {}).get("found")]
    own = sum(size(rs[t]) for t in common) / max(len(common), 1)
    ref = sum(size(greedy[t]) for t in common) / max(len(common), 1)
    ev = sum(r.get("evaluations") or 0 for r in rs.values()) / len(rs)
    return {
        "graph": graph, "method": label, "found": len(found), "targets": len(rs),
        "of_greedy_found": len(common),
        "greedy_found": sum(r["found"] for r in greedy.values()),
        "size_own_common": f"{own:.2f}", "size_greedy_common": f"{ref:.2f}",
        "size_ratio": f"{own / ref:.3f}" if ref else "",
        "evaluations_per_target": round(ev),
        "training_s": seconds(policy) if policy else "", "note": note,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default="runs/limit")
    ap.add_argument("--csv")
    ap.add_argument("--pyg-csv")
    a = ap.parse_args()
    o = a.out
    rows = []
    for g in ("cora", "citeseer"):
        for t, pre in (("60", ""), ("300", "t300-")):
            greedy = records(f"{o}/{g}-{pre}greedy", "greedy")
            if greedy is None:
                continue
            spec = [
                ("greedy", f"{pre}greedy", "greedy", None, ""),
                ("greedy --shortlist 1", f"{pre}greedy-sl1", "greedy", None, ""),
                ("untrained, estimated state (the prior alone)", f"{pre}untrained-estimated",
                 "untrained", None, ""),
                ("inductive, REINFORCE (the paper's training)", "inductive", "inductive",
                 "policy", ""),
                ("inductive, REINFORCE, targeted state", "targeted-inductive", "inductive",
                 "policy-targeted", ""),
                ("inductive, the recipe", f"{pre}recipe-inductive", "inductive", "policy-recipe",
                 "900 training targets, up to 128 judged per state"),
                ("inductive, the recipe, --seed 7", f"{pre}recipe-s7-inductive", "inductive",
                 "policy-recipe-s7", ""),
                ("inductive-best-of-k, the recipe", "recipe-inductive", "inductive-best-of-k",
                 None, ""),
                ("inductive --lookahead 8 --widen, the recipe", "recipe-inductive-la8-w",
                 "inductive", None, ""),
                ("inductive-best-of-k --lookahead 32 --widen, the recipe",
                 "recipe-bestofk-la32-w", "inductive-best-of-k", None, ""),
                ("the control: best-of-k --lookahead 32 --widen --temperature 1000000 "
                 "(REINFORCE)", "bestofk-la32-w-t1000000", "inductive-best-of-k", None, ""),
                ("inductive, the recipe on the targeted state (no gradients)",
                 "targeted-n900-inductive", "inductive", "policy-targeted-n900", ""),
                ("inductive, the recipe before (150 / 250 targets, 2,048 judged)",
                 f"{pre}recipe-mj2048-inductive", "inductive", "policy-recipe-mj2048", ""),
                ("inductive-best-of-k, the recipe before", "recipe-mj2048-inductive",
                 "inductive-best-of-k", None, ""),
                ("inductive --lookahead 8 --widen, the recipe before",
                 "recipe-mj2048-inductive-la8-w", "inductive", None, ""),
                ("inductive, the recipe before at prior weight 1", "recipe-pw1-inductive",
                 "inductive", "policy-recipe-pw1", ""),
                ("inductive, 150 targets, 256 judged", "n150-mj256-inductive", "inductive",
                 "policy-n150-mj256", ""),
                ("inductive, 450 targets, 256 judged", "n450-mj256-inductive", "inductive",
                 "policy-n450-mj256", ""),
                ("inductive, 450 targets, 256 judged, --seed 7", "n450-mj256-s7-inductive",
                 "inductive", "policy-n450-mj256-s7", ""),
                ("inductive, 900 targets, 256 judged, 10 passes", "n900-mj256-e10-inductive",
                 "inductive", "policy-n900-mj256-e10", ""),
                ("inductive, 1,800 targets, 128 judged", "n1800-inductive", "inductive",
                 "policy-n1800", ""),
                ("inductive, the recipe with --curriculum 5", f"{pre}recipe-cur5-inductive",
                 "inductive", "policy-recipe-cur5", ""),
                ("inductive, the recipe with --curriculum 5, --seed 7", "recipe-cur5-s7-inductive",
                 "inductive", "policy-recipe-cur5-s7", ""),
                ("inductive, the recipe + 5 REINFORCE passes (--finetune 5)",
                 f"{pre}recipe-ftb5-inductive", "inductive", "policy-recipe-ftb5", ""),
                ("inductive, the recipe + 5 REINFORCE passes, greedy baseline",
                 f"{pre}recipe-ftg5-inductive", "inductive", "policy-recipe-ftg5", ""),
            ]
            for label, run, method, policy, note in spec:
                if pre and not run.startswith(pre):
                    continue
                r = row(f"{g} ({t} targets)" if pre else g, label, f"{o}/{g}-{run}", method,
                        greedy, f"{o}/{g}-{policy}" if policy else None, note)
                if r:
                    rows.append(r)
    exact = records(f"{o}/syn1-exact", "exact")
    if exact is not None:
        for label, run, method, policy in (
            ("exact (the certified minimum)", "exact", "exact", None),
            ("greedy --shortlist 1", "greedy-sl1", "greedy", None),
            ("inductive, the recipe (2,048 judged)", "recipe-inductive", "inductive",
             "policy-recipe"),
            ("inductive-best-of-k, the recipe (2,048 judged)", "recipe-inductive",
             "inductive-best-of-k", None),
            ("inductive, the recipe (2,048 judged), --seed 7", "recipe-s7-inductive",
             "inductive", "policy-recipe-s7"),
            ("inductive-best-of-k, the recipe (2,048 judged), --seed 7", "recipe-s7-inductive",
             "inductive-best-of-k", None),
            ("inductive, the recipe (2,048 judged) at prior weight 1", "recipe-pw1-inductive",
             "inductive", "policy-recipe-pw1"),
            ("inductive, 128 judged", "recipe-mj128-inductive", "inductive",
             "policy-recipe-mj128"),
            ("inductive-best-of-k, 128 judged", "recipe-mj128-inductive", "inductive-best-of-k",
             None),
            ("inductive, 128 judged, --seed 7", "recipe-mj128-s7-inductive", "inductive",
             "policy-recipe-mj128-s7"),
            ("inductive-best-of-k, 128 judged, --seed 7", "recipe-mj128-s7-inductive",
             "inductive-best-of-k", None),
        ):
            r = row("syn1", label, f"{o}/syn1-{run}", method, exact,
                    f"{o}/syn1-{policy}" if policy else None)
            if r:
                rows.append(r)
    cols = ["graph", "method", "found", "targets", "of_greedy_found", "greedy_found",
            "size_own_common", "size_greedy_common", "size_ratio", "evaluations_per_target",
            "training_s", "note"]
    print("| graph | method | found | of greedy's | sizes (own / greedy's) | × | evaluations "
          "| training s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['graph']} | {r['method']} | {r['found']}/{r['targets']} | "
              f"{r['of_greedy_found']}/{r['greedy_found']} | {r['size_own_common']} / "
              f"{r['size_greedy_common']} | {r['size_ratio']} | {r['evaluations_per_target']} | "
              f"{r['training_s']} |")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols)
            w.writeheader()
            w.writerows(rows)
    pyg = []
    for g in ("cora", "citeseer"):
        for m in ("gcn", "sage", "gin", "gat"):
            p = f"{o}/pyg-{g}"
            greedy = records(f"{p}/{m}-greedy", "greedy")
            if greedy is None:
                continue
            cells = {"graph": g, "model": m}
            for key, run, method, policy in (
                ("shortlist1", "greedy-sl1", "greedy", None),
                ("recipe", "recipe-inductive", "inductive", "policy-recipe"),
                ("recipe_before", "recipe-mj2048-inductive", "inductive", "policy-recipe-mj2048"),
                ("prior_weight1", "recipe-pw1-inductive", "inductive", None),
                ("prior_alone", "untrained-estimated", "untrained", None),
            ):
                r = row(g, key, f"{p}/{m}-{run}", method, greedy,
                        f"{p}/{m}-{policy}" if policy else None)
                if r is None:
                    continue
                cells["targets"] = r["targets"]
                cells["greedy_found"] = r["greedy_found"]
                cells[f"{key}_found"] = r["found"]
                if key in ("recipe", "recipe_before", "shortlist1"):
                    cells[f"{key}_size_ratio"] = r["size_ratio"]
                    cells[f"{key}_evaluations"] = r["evaluations_per_target"]
                if key in ("recipe", "recipe_before"):
                    cells[f"{key}_training_s"] = r["training_s"]
            pyg.append(cells)
    if pyg:
        keys = ["graph", "model", "targets", "greedy_found", "shortlist1_found",
                "shortlist1_size_ratio", "shortlist1_evaluations", "recipe_found",
                "recipe_size_ratio", "recipe_evaluations", "recipe_training_s",
                "recipe_before_found", "recipe_before_size_ratio", "recipe_before_evaluations",
                "recipe_before_training_s", "prior_weight1_found", "prior_alone_found"]
        print()
        print("| " + " | ".join(keys) + " |")
        print("|" + "---|" * len(keys))
        for c in pyg:
            print("| " + " | ".join(str(c.get(k, "")) for k in keys) + " |")
        if a.pyg_csv:
            with open(a.pyg_csv, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=keys)
                w.writeheader()
                w.writerows(pyg)


if __name__ == "__main__":
    sys.exit(main())

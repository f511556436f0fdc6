#!/usr/bin/env python3
"""The table of scripts/feature-runs.sh (docs/RESULTS.md, "Feature edits"): per model, greedy with
edge edits alone, feature edits alone and both, and CF-GNNFeatures (`cfgf`, where run), on the same
targets; then greedy's feature edits at other quantile levels (`feat-qK`, where run), and InduCE's
policy trained with feature actions, its argmax (`ind-feat`, `ind-both`, where run), beside the
gradient's argmax at the same cost (`sl1-feat`, `sl1-both`: greedy --shortlist 1).

    python3 scripts/feature-table.py runs/features [--csv docs/results/features.csv]

Columns: found (counterfactuals, all checked on the whole edited graph: `valid`), edges and
features changed (means over the found ones, never summed), evaluations and seconds per target;
then, on the targets that both the edge-only and the joint search explain, the edge-only size
against the joint search's total (edges + features). Standard library only.
"""

import argparse
import csv
import json
import os
import sys

MODES = (("edges", "add,del"), ("feat", "feat"), ("both", "add,del,feat"))
# Rows shown where their run exists: the peer, and greedy's feature edits at other quantile levels.
EXTRA = (("cfgf", "cf-gnnfeatures"),) + tuple((f"feat-q{k}", f"feat, {k} levels") for k in (2, 5, 9)) \
    + (("ind-feat", "inductive, feat"), ("ind-both", "inductive, add,del,feat"),
       ("sl1-feat", "greedy --shortlist 1, feat"), ("sl1-both", "greedy --shortlist 1, add,del,feat"))


def records(run):
    path = os.path.join(run, "explanations.jsonl")
    with open(path) as f:
        return {r["target"]: r for r in map(json.loads, f)}


def seconds(run):
    with open(os.path.join(run, "summary.json")) as f:
        s = json.load(f)
    rows = s["runs"] if "runs" in s else s
    return sum(r.get("explain_seconds", 0.0) for r in rows)


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--csv", default=None)
    a = ap.parse_args()
    suffixes = [m for m, _ in MODES]
    # A model's runs are NAME-edges, NAME-feat, NAME-both (InduCE's: NAME-ind-*, NAME-policy-*).
    names = sorted({d[:-len(m) - 1] for d in os.listdir(a.dir) for m in suffixes
                    if d.endswith("-" + m) and os.path.isdir(os.path.join(a.dir, d))
                    and not d[:-len(m) - 1].endswith(("-ind", "-policy", "-sl1"))})
    rows = []
    for name in names:
        runs = {m: os.path.join(a.dir, f"{name}-{m}") for m, _ in MODES}
        if not all(os.path.exists(os.path.join(r, "explanations.jsonl")) for r in runs.values()):
            print(f"{name}: incomplete, skipped", file=sys.stderr)
            continue
        for m, _ in EXTRA:
            r = os.path.join(a.dir, f"{name}-{m}")
            if os.path.exists(os.path.join(r, "explanations.jsonl")):
                runs[m] = r
        recs = {m: records(r) for m, r in runs.items()}
        shown = [(m, e) for m, e in MODES + EXTRA if m in runs]
        for m, edits in shown:
            rs = list(recs[m].values())
            found = [r for r in rs if r["found"]]
            invalid = [r for r in found if r.get("valid") is not True]
            if invalid:
                sys.exit(f"{name}-{m}: {len(invalid)} found record(s) not valid on the whole graph")
            rows.append({
                "model": name,
                "edits": edits,
                "targets": len(rs),
                "found": len(found),
                "edges": round(mean(len(r["edits"]) for r in found), 2),
                "features": round(mean(len(r.get("feature_edits", [])) for r in found), 2),
                "evaluations": round(mean(r.get("evaluations", 0) for r in rs), 1),
                "seconds": round(seconds(runs[m]) / max(1, len(rs)), 3),
            })
        # InduCE's rows against greedy's in the same mode, on the targets both explain.
        total = lambda r: len(r["edits"]) + len(r.get("feature_edits", []))
        for row, (m, _) in zip(rows[-len(shown):], shown):
            base = {"ind-feat": "feat", "ind-both": "both", "sl1-feat": "feat",
                    "sl1-both": "both"}.get(m)
            if base is None:
                continue
            common = [t for t, r in recs[m].items()
                      if r["found"] and recs[base].get(t, {}).get("found")]
            row["vs_greedy"] = (f"greedy's {len(common)}: {mean(total(recs[base][t]) for t in common):.2f}"
                                f" → {mean(total(recs[m][t]) for t in common):.2f}")
        both = [t for t, r in recs["both"].items()
                if r["found"] and recs["edges"].get(t, {}).get("found")]
        joint = rows[-len(shown) + 2]
        joint["common"] = len(both)
        joint["edge_only_size"] = round(mean(len(recs["edges"][t]["edits"]) for t in both), 2)
        joint["joint_total"] = round(mean(
            len(recs["both"][t]["edits"]) + len(recs["both"][t].get("feature_edits", []))
            for t in both), 2)
    print("| model | edits | found | edges | features | evaluations / target | s / target "
          "| both explain: edge-only size → joint total (InduCE: greedy's → its total) |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        cmp = (f"{r['common']}: {r['edge_only_size']} → {r['joint_total']}"
               if "common" in r else r.get("vs_greedy", ""))
        print(f"| {r['model']} | `{r['edits']}` | {r['found']}/{r['targets']} | {r['edges']} | "
              f"{r['features']} | {r['evaluations']} | {r['seconds']} | {cmp} |")
    if a.csv:
        keys = ["model", "edits", "targets", "found", "edges", "features", "evaluations",
                "seconds", "common", "edge_only_size", "joint_total", "vs_greedy"]
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            for r in rows:
                w.writerow({k: r.get(k, "") for k in keys})


if __name__ == "__main__":
    main()

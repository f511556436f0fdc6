#!/usr/bin/env python3
"""How close to the limit: one markdown row per (graph, method) from induce run directories.

Usage: scripts/limit-table.py [--csv FILE] --exact EXACT_RUN --greedy GREEDY_RUN GRAPH RUN [RUN ...]

The rows go to stdout as markdown; with `--csv FILE` they are also appended to FILE (its header,
CSV_COLUMNS, written first when FILE is new or empty): the full grid of docs/results/limit.csv,
written by `LIMIT_CSV=docs/results/limit.csv scripts/limit-runs.sh`.

Columns: found (valid counterfactuals) of the targets; mean size over the targets found; share
of the targets `exact` certified (minimum = s) on which the method found a counterfactual of
size s or less (less only in a wider action space, `--additions graph`); how many of greedy's
targets the method finds too, and on those the two mean sizes (the method's / greedy's);
evaluations (black-box calls) per target; seconds per target of
explaining (a transductive method trains its per-target policies inside it; an inductive one's
policy, trained once beforehand, is not counted). Reads
explanations.jsonl and summary.json only (no shared code with induce).
"""
import argparse
import csv
import json
import os
import re


def records(run):
    out = {}
    for line in open(os.path.join(run, "explanations.jsonl")):
        r = json.loads(line)
        out.setdefault(r["method"], {})[r["target"]] = r
    return out


def seconds(run):
    s = json.load(open(os.path.join(run, "summary.json")))
    return {r["method"]: r["explain_seconds"] for r in s["runs"]}


def flags(run):
    """The options a run directory's name records: `-laK` (--lookahead K), `-laK-w`
    (--lookahead K --widen), `-tT` (--temperature T), `-slK` (--shortlist K), `-graph`
    (--additions graph), `-targeted` (--state targeted); a policy trained by imitation:
    `-recipe` (`induce train`'s default recipe; `-recipe-pwW` at --prior-weight W), `-im-STATE[-h16]` (--training imitation
    --state STATE [--hidden 16]), `-im-bc` (--teacher-temperature 0), `-im-nodagger`
    (--teacher-share 1), `-im-finetune` (--finetune 20), `-rf-estimated` (REINFORCE, the
    estimated state)."""
    name = os.path.basename(os.path.normpath(run))
    out = []
    m = re.search(r"-la(\d+)(-w)?", name)
    if m:
        out.append(f"--lookahead {m.group(1)}" + (" --widen" if m.group(2) else ""))
    m = re.search(r"-t(\d+)$", name)
    if m:
        out.append(f"--temperature {m.group(1)}")
    m = re.search(r"-sl(\d+)", name)
    if m:
        out.append(f"--shortlist {m.group(1)}")
    if name.endswith("-graph"):
        out.append("--additions graph")
    policy = {
        "-recipe-cur5": "[policy: recipe, --curriculum 5]",
        "-recipe-ftb5": "[policy: recipe + 5 REINFORCE passes]",
        "-recipe-ftg5": "[policy: recipe + 5 REINFORCE passes, greedy baseline]",
        "-recipe-pw1": "[policy: recipe at prior weight 1]",
        "-recipe-pw3": "[policy: recipe at prior weight 3]",
        "-recipe": "[policy: recipe]",
        "-im-paper-h16": "[policy: imitation, paper state, width 16]",
        "-im-targeted-h16": "[policy: imitation, targeted, width 16]",
        "-im-targeted": "[policy: imitation, targeted]",
        "-im-estimated-h16": "[policy: recipe, width 16]",
        "-im-bc": "[policy: recipe, teacher temperature 0]",
        "-im-nodagger": "[policy: recipe, teacher share 1]",
        "-im-finetune": "[policy: recipe + 20 REINFORCE passes]",
        "-rf-estimated": "[policy: REINFORCE, estimated state]",
    }
    tagged = next((v for k, v in policy.items() if k + "-" in name), None)
    if tagged:
        out.insert(0, tagged)
    elif "-targeted" in name:
        out.append("--state targeted")
    elif name.endswith("-untrained-estimated"):
        out.append("--state estimated")
    return (" " + " ".join(out)) if out else ""


# The CSV's columns, one per markdown column, the composite cells split: "found/targets",
# "of_greedy_found/greedy_found (size_own_common / size_greedy_common)". Numbers are formatted as
# in the markdown (no thousands separator, no " %"); a "-" cell is empty.
CSV_COLUMNS = [
    "graph",
    "method",
    "options",
    "found",
    "targets",
    "size",
    "at_exact_minimum_pct",
    "of_greedy_found",
    "greedy_found",
    "size_own_common",
    "size_greedy_common",
    "evaluations_per_target",
    "seconds_per_target",
]


def main():
    p = argparse.ArgumentParser(
        description="How close to the limit: one row per (graph, method) of induce run directories."
    )
    p.add_argument("--csv", help="also append the rows to this CSV file (header if new)")
    p.add_argument("--exact", help="a run directory with the exact method")
    p.add_argument("--greedy", help="a run directory with the greedy method")
    p.add_argument("graph")
    p.add_argument("runs", nargs="+")
    a = p.parse_args()
    exact = records(a.exact)["exact"] if a.exact else {}
    minimum = {
        t: r["certified"]["minimum"]["size"]
        for t, r in exact.items()
        if "minimum" in (r.get("certified") or {})
    }
    greedy = records(a.greedy)["greedy"] if a.greedy else {}
    greedy_found = {t for t, r in greedy.items() if r["found"] and r.get("valid") is not False}
    greedy_size = {t: len(greedy[t]["edits"]) for t in greedy_found}
    table = None
    if a.csv:
        new = not os.path.exists(a.csv) or os.path.getsize(a.csv) == 0
        out = open(a.csv, "a", newline="")
        table = csv.writer(out, lineterminator="\n")
        if new:
            table.writerow(CSV_COLUMNS)
    for run in a.runs:
        secs = seconds(run)
        for method, recs in records(run).items():
            n = len(recs)
            found = {t for t, r in recs.items() if r["found"] and r.get("valid") is not False}
            sizes = [len(recs[t]["edits"]) for t in found]
            size = sum(sizes) / len(sizes) if sizes else float("nan")
            certified = [t for t in recs if t in minimum]
            at_min = sum(
                1 for t in certified if t in found and len(recs[t]["edits"]) <= minimum[t]
            )
            evals = [r.get("evaluations") for r in recs.values()]
            ev = (
                f"{sum(evals) / n:,.0f}"
                if all(e is not None for e in evals) and n
                else "-"
            )
            share = f"{100 * at_min / len(certified):.1f} %" if certified else "-"
            both = found & greedy_found
            mine = sum(len(recs[t]["edits"]) for t in both) / max(len(both), 1)
            theirs = sum(greedy_size[t] for t in both) / max(len(both), 1)
            of_greedy = (
                f"{len(both)}/{len(greedy_found)} ({mine:.2f} / {theirs:.2f})"
                if greedy_found
                else "-"
            )
            print(
                f"| {a.graph} | {method}{flags(run)} | {len(found)}/{n} | {size:.3f} | {share} | "
                f"{of_greedy} | {ev} | {secs[method] / n:.4f} |"
            )
            if table:
                table.writerow(
                    [
                        a.graph,
                        method,
                        flags(run).strip(),
                        len(found),
                        n,
                        f"{size:.3f}" if sizes else "",
                        f"{100 * at_min / len(certified):.1f}" if certified else "",
                        len(both) if greedy_found else "",
                        len(greedy_found) if greedy_found else "",
                        f"{mine:.2f}" if greedy_found else "",
                        f"{theirs:.2f}" if greedy_found else "",
                        ev.replace(",", "") if ev != "-" else "",
                        f"{secs[method] / n:.4f}",
                    ]
                )
    if table:
        out.close()


if __name__ == "__main__":
    main()

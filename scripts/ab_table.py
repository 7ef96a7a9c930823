#!/usr/bin/env python3
"""The table of an A/B call (scripts/gpu-ab.sh): per case, operation and size, each
variant's time (the minimum over the rounds, eager and in a CUDA graph where measured) and
its ratio to the first variant's (below 1: faster than the first).

Input: blocks "== VARIANT rN CASE" followed by mccl-threads-bench rows
"op bytes host eager graph" (µs)."""
import collections
import re
import sys


def main(path):
    times = collections.defaultdict(list)  # (case, op, bytes, variant) -> [(eager, graph)]
    variants, cases = [], []
    key = None
    for line in open(path, errors="replace"):
        m = re.match(r"== (\S+) r(\d+) (.*)", line)
        if m:
            key = (m.group(1), m.group(3).strip())
            if key[0] not in variants:
                variants.append(key[0])
            continue
        f = line.split()
        if key and len(f) == 5 and f[1].isdigit():
            row = (key[1], f[0], int(f[1]))
            if row not in cases:
                cases.append(row)
            times[row + (key[0],)].append((float(f[3]), float(f[4])))
    if not variants:
        print("no measurements")
        return
    base = variants[0]
    graphs = any(g > 0 for v in times.values() for _, g in v)
    head = ["case", "op", "bytes"]
    for v in variants:
        head += [f"{v} eager"] + ([] if v == base else ["ratio"])
    if graphs:
        for v in variants:
            head += [f"{v} graph"] + ([] if v == base else ["ratio"])
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] * 2 + ["---:"] * (len(head) - 2)) + "|")
    for row in cases:
        best = {}
        for v in variants:
            t = times.get(row + (v,))
            if t:
                best[v] = (min(x[0] for x in t), min(x[1] for x in t))
        cells = [row[0], row[1], str(row[2])]
        for col in [0, 1] if graphs else [0]:
            for v in variants:
                if v not in best:
                    cells += ["-"] + ([] if v == base else ["-"])
                    continue
                cells.append(f"{best[v][col]:.2f}")
                if v != base:
                    b = best.get(base, (0, 0))[col]
                    cells.append(f"{best[v][col] / b:.3f}" if b > 0 else "-")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1])

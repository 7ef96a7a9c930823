#!/usr/bin/env python3
"""mccl against NCCL in every buffer mode, from the CSVs of gpu-sweep.sh's `modes` step.

  scripts/modes_table.py DIR

DIR holds modes_{mccl,nccl}_R{0,1,2}.csv (eager), the same with _graph (CUDA graphs) and
modes_{lib}_R2_ce.csv (windows under NCCL_CTA_POLICY=2: the copy engines). Times in µs;
ratio = NCCL time / mccl time (above 1: mccl faster). Per row: each mode's time for both
libraries, then mccl's best mode against NCCL's best, mccl's plain buffers (R0) against
NCCL's best, and the worst of the mode-against-mode ratios."""
import csv
import os
import sys

MODES = [("R0", "plain"), ("R1", "registered"), ("R2", "windows"), ("R2_ce", "windows, copy engines")]


def load(path):
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for r in csv.DictReader(f):
            rows[(r["op"], int(r["bytes"]))] = float(r["time_us"])
    return rows


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:g} {unit}"
        n /= 1024


def fmt(t):
    return "" if t is None else (f"{t:.2f}" if t < 100 else f"{t:.0f}")


def table(d, suffix, title, below):
    data = {lib: {m: load(os.path.join(d, f"modes_{lib}_{m}{suffix}.csv")) for m, _ in MODES} for lib in ("mccl", "nccl")}
    keys = sorted({k for lib in data.values() for m in lib.values() for k in m}, key=lambda k: (k[0], k[1]))
    if not keys:
        return
    print(f"## {title}\n")
    print("| op | size | mccl plain | mccl reg | mccl win | mccl win CE | NCCL plain | NCCL reg | NCCL win | NCCL win CE "
          "| best / best | mccl plain / NCCL best | worst mode / mode |")
    print("|---|---:|" + "---:|" * 11)
    for op, b in keys:
        t = {lib: {m: data[lib][m].get((op, b)) for m, _ in MODES} for lib in data}
        best = {lib: min((v for v in t[lib].values() if v), default=None) for lib in t}
        if best["mccl"] is None or best["nccl"] is None:
            continue
        rb = best["nccl"] / best["mccl"]
        rp = best["nccl"] / t["mccl"]["R0"] if t["mccl"]["R0"] else None
        mm = [t["nccl"][m] / t["mccl"][m] for m, _ in MODES if t["nccl"][m] and t["mccl"][m]]
        worst = min(mm) if mm else None
        cells = [fmt(t["mccl"][m]) for m, _ in MODES] + [fmt(t["nccl"][m]) for m, _ in MODES]
        r = lambda x: "" if x is None else (f"**{x:.2f}**" if x < 1 else f"{x:.2f}")
        print(f"| {op} | {human(b)} | " + " | ".join(cells) + f" | {r(rb)} | {r(rp)} | {r(worst)} |")
        if rp is not None and rp < 1:
            below.append(f"{title}: {op} {human(b)}: mccl plain {t['mccl']['R0']:.2f} µs, NCCL best {best['nccl']:.2f}")
    print()


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    below = []
    table(d, "", "eager", below)
    table(d, "_graph", "CUDA graphs (10 calls a graph)", below)
    print(f"## mccl's plain buffers below NCCL's best mode: {len(below)}\n")
    for line in below:
        print(f"- {line}")


if __name__ == "__main__":
    main()

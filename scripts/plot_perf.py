#!/usr/bin/env python3
"""busbw vs size, mccl against NCCL, one panel per collective, from mccl-perf CSV files.

    plot_perf.py mccl.csv nccl.csv out.png "title"
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    data = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            data.setdefault(row["op"], []).append((int(row["bytes"]), float(row["busbw"])))
    return data


def main():
    mccl, nccl, out = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
    title = sys.argv[4] if len(sys.argv) > 4 else ""
    ops = [op for op in mccl if op in nccl]
    cols = 3
    rows = (len(ops) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    for ax, op in zip(axes.flat, ops):
        for name, d, style in (("mccl", mccl, "o-"), ("NCCL", nccl, "s--")):
            pts = sorted(d[op])
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=name, markersize=3)
        ax.set_xscale("log", base=2)
        ax.set_title(op)
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel("busbw (GB/s)")
        ax.grid(True, alpha=0.3)
        ax.legend()
    for ax in list(axes.flat)[len(ops):]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The plot of a modes table (scripts/modes_table.py's markdown): per collective, NCCL's
best mode's time over mccl's plain buffers' and over mccl's best mode's, against the size
(above 1: mccl faster), one panel per collective, from the table's first section (eager).

    plot_modes.py MODES.md OUT.png "title"
"""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def load(path):
    """op -> [(bytes, mccl plain / NCCL best, mccl best / NCCL best)] of the first section."""
    data, sections = {}, 0
    for line in open(path):
        if line.startswith("## "):
            sections += 1
            if sections > 1:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 13 or not re.fullmatch(r"[\d.]+ (B|KiB|MiB|GiB)", cells[1]):
            continue
        n, unit = cells[1].split()
        ratio = lambda c: float(c.strip("*"))  # noqa: E731
        data.setdefault(cells[0], []).append((float(n) * UNITS[unit], ratio(cells[11]), ratio(cells[10])))
    return data


def label(b):
    for unit in ("GiB", "MiB", "KiB"):
        if b >= UNITS[unit]:
            return "%g %s" % (b / UNITS[unit], unit)
    return "%g B" % b


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    data, out = load(sys.argv[1]), sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else ""
    ops = sorted(data)
    cols = 3
    rows = (len(ops) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.4 * rows), squeeze=False)
    for ax, op in zip(axes.flat, ops):
        pts = sorted(data[op])
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] for p in pts], "o-", label="mccl plain / NCCL best")
        ax.plot(xs, [p[2] for p in pts], "s--", label="mccl best / NCCL best")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        ticks = xs[:: max(1, len(xs) // 5)]
        ax.set_xticks(ticks)
        ax.set_xticklabels([label(t) for t in ticks], fontsize=8)
        ax.set_title(op)
        ax.set_ylabel("speed ratio (> 1: mccl faster)", fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(ops):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


if __name__ == "__main__":
    main()

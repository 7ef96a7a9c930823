#!/usr/bin/env python3
"""Markdown table of mccl against a peer from two mccl-perf/nccl-perf CSV files.

  scripts/ratio_table.py MCCL.csv PEER.csv [--min-bytes N] [--label-a mccl] [--label-b nccl]

Rows are (op, bytes) present in both files; ratio = mccl busbw / peer busbw (time ratio
peer/mccl where busbw is 0, for tiny sizes)."""
import argparse
import csv


def load(path):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            rows[(r["op"], int(r["bytes"]))] = r
    return rows


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:g} {unit}" if unit == "B" else f"{n:g} {unit}"
        n /= 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--min-bytes", type=int, default=0)
    ap.add_argument("--label-a", default="mccl")
    ap.add_argument("--label-b", default="nccl")
    o = ap.parse_args()
    a, b = load(o.a), load(o.b)
    print(f"| op | size | {o.label_a} µs | {o.label_b} µs | {o.label_a} busbw GB/s | "
          f"{o.label_b} busbw GB/s | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key in sorted(set(a) & set(b), key=lambda k: (k[0], k[1])):
        if key[1] < o.min_bytes:
            continue
        ra, rb = a[key], b[key]
        ta, tb = float(ra["time_us"]), float(rb["time_us"])
        ratio = tb / ta if ta > 0 else 0.0
        print(f"| {key[0]} | {human(key[1])} | {ta:.1f} | {tb:.1f} | {float(ra['busbw']):.2f} | "
              f"{float(rb['busbw']):.2f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()

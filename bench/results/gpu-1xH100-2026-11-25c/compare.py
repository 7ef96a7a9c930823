#!/usr/bin/env python3
# Side-by-side table of two builds or settings from one mccl-threads-bench log:
#   compare.py LOG OLD NEW
# LOG has blocks headed "== LABEL rN MODE" (N: the repetition); OLD and NEW are two labels.
# Each cell is the graph column's minimum over the repetitions; ratio = NEW / OLD.
import collections
import re
import sys

log, old, new = sys.argv[1], sys.argv[2], sys.argv[3]
cells = collections.defaultdict(dict)
cur = None
for line in open(log):
    m = re.match(r'== (\S+) r\d+ (.*)', line)
    if m:
        cur = (m.group(2).strip(), m.group(1))
        continue
    p = line.split()
    if cur and len(p) == 5 and p[1].isdigit():
        key = (cur[0], p[0], int(p[1]))
        cells[key][cur[1]] = min(cells[key].get(cur[1], 1e9), float(p[4]))
print(f"| mode | op | bytes | {old} µs | {new} µs | ratio |")
print("|---|---|---:|---:|---:|---:|")
for key, v in cells.items():
    if old in v and new in v:
        print(f"| {key[0]} | {key[1]} | {key[2]} | {v[old]:.2f} | {v[new]:.2f} | {v[new] / v[old]:.2f} |")

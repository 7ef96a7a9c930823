#!/usr/bin/env python3
"""Medians over the rounds of run_ab.sh's CSVs: mccl us old -> new (MPI/mccl old -> new).

This VM runs in two regimes that change between launches (its two vCPUs close together or
far apart: an 8-byte MPI_Sendrecv takes ~0.2 us in one and ~0.5 us in the other, for old and
new alike). Besides the medians of all rounds, the np2 files are split by the regime of
their own process: 'near' where MPI's 8-byte call (Sendrecv for np2, Allreduce for np2coll)
took under 0.35 us, 'far' otherwise; ratios compare old and new within a regime."""
import collections, csv, glob, statistics, sys

out = sys.argv[1] if len(sys.argv) > 1 else '/tmp/ab/p2p'
PROBE = {'np2': 'sendrecv', 'np2coll': 'allreduce'}


def load(pre):
    runs = []  # (variant, regime, rows)
    for f in sorted(glob.glob(f'{out}/{pre}_*_*.csv')):
        v = f.rsplit('/', 1)[-1].split('_')[1]
        rows = list(csv.DictReader(open(f)))
        regime = 'all'
        if pre in PROBE:
            probe = [float(r['mpi_time_us']) for r in rows if r['op'] == PROBE[pre] and int(r['bytes']) == 8]
            regime = 'near' if probe and probe[0] < 0.35 else 'far'
        runs.append((v, regime, rows))
    return runs


def table(title, runs):
    d = collections.defaultdict(list)
    n = collections.Counter(v for v, _, _ in runs)
    for v, _, rows in runs:
        for row in rows:
            d[(row['op'], int(row['bytes']), v)].append((float(row['time_us']), float(row['mpi_time_us'])))
    print(f'## {title} (rounds: old {n["old"]}, new {n["new"]}): mccl us old -> new (MPI/mccl old -> new), medians')
    for op, b in sorted({(k[0], k[1]) for k in d}):
        o, nw = d[(op, b, 'old')], d[(op, b, 'new')]
        if not o or not nw:
            continue
        mo, mn = statistics.median(x[0] for x in o), statistics.median(x[0] for x in nw)
        ro, rn = statistics.median(x[1] / x[0] for x in o), statistics.median(x[1] / x[0] for x in nw)
        print(f'{op:14s}{b:>10d} {mo:9.2f} -> {mn:9.2f}   ({ro:5.2f} -> {rn:5.2f})')


for pre in ('np2', 'np2coll', 'np4', 'np4big'):
    runs = load(pre)
    table(pre, runs)
    if pre in PROBE:
        for regime in ('near', 'far'):
            table(f'{pre}, {regime}', [r for r in runs if r[1] == regime])

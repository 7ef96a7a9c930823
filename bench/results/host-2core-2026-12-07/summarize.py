#!/usr/bin/env python3
"""Medians over the rounds of run_ab.sh's CSVs: mccl us old -> new (MPI/mccl old -> new)."""
import collections, csv, glob, statistics, sys

out = sys.argv[1] if len(sys.argv) > 1 else '/tmp/ab/yield'
for pre in ('np4', 'np4big', 'np2'):
    d = collections.defaultdict(list)
    for f in glob.glob(f'{out}/{pre}_*_*.csv'):
        v = f.rsplit('/', 1)[-1].split('_')[1]
        for row in csv.DictReader(open(f)):
            d[(row['op'], int(row['bytes']), v)].append((float(row['time_us']), float(row['mpi_time_us'])))
    print(f'## {pre}: mccl us old -> new (MPI/mccl old -> new), medians of the rounds')
    for op, b in sorted({(k[0], k[1]) for k in d}):
        o, n = d[(op, b, 'old')], d[(op, b, 'new')]
        if not o or not n:
            continue
        mo, mn = statistics.median(x[0] for x in o), statistics.median(x[0] for x in n)
        ro, rn = statistics.median(x[1] / x[0] for x in o), statistics.median(x[1] / x[0] for x in n)
        print(f'{op:14s}{b:>10d} {mo:9.2f} -> {mn:9.2f}   ({ro:5.2f} -> {rn:5.2f})')

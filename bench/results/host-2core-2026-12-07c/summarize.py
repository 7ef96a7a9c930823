#!/usr/bin/env python3
"""Medians over the rounds of run_ab.sh's CSVs, from 4 KiB (below it nothing changed): mccl us
for MCCL_HOST_SHM_STREAM=0 / 1 / auto, MPI/mccl in parentheses.

This VM runs its two vCPUs either sharing an L3 ('near': an 8-byte MPI_Sendrecv ~0.2 us)
or not ('far': ~0.5 us), changing between launches and at times within one. The np2 files
are split by the regime of their own process: 'near' where MPI's 8-byte call (Sendrecv for
np2, Allreduce for np2coll) took under 0.35 us, 'far' otherwise; np4 (4 ranks on 2 cores)
is not split."""
import collections, csv, glob, statistics, sys

out = sys.argv[1] if len(sys.argv) > 1 else '/tmp/ab/stream'
PROBE = {'np2': 'sendrecv', 'np2coll': 'allreduce'}
VARIANTS = ('s0', 's1', 'sauto')


def load(pre):
    runs = []
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
            if int(row['bytes']) >= 4096:
                d[(row['op'], int(row['bytes']), v)].append((float(row['time_us']), float(row['mpi_time_us'])))
    counts = ', '.join(f'{v[1:]} {n[v]}' for v in VARIANTS)
    print(f'## {title} (rounds: {counts}): mccl us at MCCL_HOST_SHM_STREAM=0 / 1 / auto (MPI/mccl)')
    for op, b in sorted({(k[0], k[1]) for k in d}):
        cells = []
        for v in VARIANTS:
            x = d.get((op, b, v))
            cells.append(f'{statistics.median(t for t, _ in x):7.2f} ({statistics.median(m / t for t, m in x):4.2f})'
                         if x else f'{"-":>14s}')
        print(f'{op:14s}{b:>7d}  ' + '  '.join(cells))
    print()


for pre in ('np2', 'np2coll', 'np4'):
    runs = load(pre)
    if pre in PROBE:
        for regime in ('near', 'far'):
            table(f'{pre}, {regime}', [r for r in runs if r[1] == regime])
    else:
        table(pre, runs)

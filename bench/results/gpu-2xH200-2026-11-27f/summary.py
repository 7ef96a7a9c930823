#!/usr/bin/env python3
"""AlltoAll per size: the median time (us) of each variant's rounds (files PREFIX<variant>_<round>.csv
in a folder), and NCCL's best mode over mccl's plain buffers and over its windows (>1: mccl faster).
Variants: mR0 mR2 mR2fifo mR2zero (mccl), nR0 nR1 nR2 nR2zero (NCCL)."""
import csv, glob, os, sys, collections
w, prefix = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else '')
t = collections.defaultdict(lambda: collections.defaultdict(list))
bw = {}
vs = []
for f in sorted(glob.glob(os.path.join(w, prefix + '*.csv'))):
    v = os.path.basename(f)[len(prefix):-4].rsplit('_', 1)[0]
    if v not in vs: vs.append(v)
    for r in csv.DictReader(open(f)):
        t[int(r['bytes'])][v].append(float(r['time_us']))
med = lambda xs: sorted(xs)[len(xs) // 2] if xs else float('nan')
nccl = [v for v in vs if v.startswith('n')]
print('bytes | ' + ' '.join('%9s' % v for v in vs) + ' | nbest/mR0 nbest/mR2 nR2zero/mR2zero | busbw mR2 nbest')
for b in sorted(t):
    d = t[b]
    m = {v: med(d[v]) for v in vs}
    nb = min(m[v] for v in nccl) if nccl else float('nan')
    busbw = lambda us: b / 2 / us / 1e3  # 2 ranks: (n-1)/n of the buffer, GB/s
    print('%10d | ' % b + ' '.join('%9.2f' % m[v] for v in vs) +
          ' | %8.3f %8.3f %8.3f | %6.1f %6.1f' % (nb / m.get('mR0', float('nan')), nb / m.get('mR2', float('nan')),
                                            m.get('nR2zero', float('nan')) / m.get('mR2zero', float('nan')),
                                            busbw(m.get('mR2', float('nan'))), busbw(nb)))

#!/usr/bin/env python3
"""The table of a device call's benchmark runs: mccl-perf / nccl-perf --csv files named
<set>_<variant>_<round>.csv in a folder (the variant 'mccl' is the build measured; others
are NCCL, knobs or other builds). Per (set, op, bytes): every round's median time (us), and
each variant's time over mccl's (> 1: mccl faster), and the best of them over mccl's.
  summary.py FOLDER [PREFIX]"""
import csv, glob, os, sys, collections
w, prefix = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else '')
t = collections.defaultdict(lambda: collections.defaultdict(list))
vs = []
for f in sorted(glob.glob(os.path.join(w, prefix + '*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    if v not in vs: vs.append(v)
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
others = [v for v in vs if v != 'mccl']
print('set op bytes | ' + ' | '.join(vs) + ' | ' + ' | '.join('%s/mccl' % v for v in others) +
      ' | best/mccl  (median time us; ratio >1: mccl faster)')
for key in sorted(t):
    d = t[key]
    med = lambda v: sorted(d[v])[len(d[v]) // 2] if d[v] else float('nan')
    rs = [med(v) / med('mccl') for v in others]
    best = min([med(v) for v in others] or [float('nan')]) / med('mccl')
    print(*key, '|', ' | '.join('/'.join('%.2f' % x for x in d[v]) for v in vs), '|',
          ' | '.join('%.3f' % r for r in rs), '| %.3f' % best)

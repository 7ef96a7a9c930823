#!/usr/bin/env python3
"""The A/B table of a device call's mccl-threads-bench runs: output files named
<set>_<variant>_<round>.txt in a folder (variants such as old and new: two builds, or a
build and a knob; no _ in the names). Per (set, op, bytes): the least time of the rounds,
eager and in a graph, of the reference variant and of each other, their ratio (reference
over variant: > 1, the variant is faster), and every round's eager time.
  threads_ab.py FOLDER SET[=TITLE] [SET[=TITLE] ...] [--ref VARIANT]   (reference: old)
A set whose files name one variant only is listed without ratios."""
import collections, glob, os, re, sys

args = sys.argv[1:]
ref = 'old'
if '--ref' in args:
    i = args.index('--ref')
    ref = args[i + 1]
    del args[i:i + 2]
if len(args) < 2:
    sys.exit(__doc__)
w, sets = args[0], args[1:]

for spec in sets:
    name, _, title = spec.partition('=')
    # (op, bytes) -> variant -> [(eager, graph) per round]
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    variants = []
    for f in sorted(glob.glob(os.path.join(w, name + '_*_*.txt'))):
        m = re.fullmatch(re.escape(name) + r'_([^_]+)_([^_]+)\.txt', os.path.basename(f))
        if not m:
            continue
        v = m.group(1)
        if v not in variants:
            variants.append(v)
        for line in open(f, errors='replace'):
            p = line.split()
            # op bytes host eager graph
            if len(p) == 5 and not line.startswith('#') and p[1].isdigit():
                t[(p[0], int(p[1]))][v].append((float(p[3]), float(p[4])))
    others = [v for v in variants if v != ref]
    base = ref if ref in variants else None
    print(f'== {title or name}: us per call, eager and graph, least of the rounds; '
          + (f'ratio {ref}/variant (> 1: the variant faster)' if base else 'one variant') + '; eager rounds')
    for (op, b), d in sorted(t.items()):
        least = {v: (min(x[0] for x in d[v]), min(x[1] for x in d[v])) for v in d}
        cells = []
        for v in ([base] if base else []) + others:
            if v not in least:
                continue
            e, g = least[v]
            cell = f'{v} {e:8.2f} {g:8.2f}'
            if base and v != base and base in least:
                cell += f' ({least[base][0] / e:5.3f} {least[base][1] / g:5.3f})'
            cells.append(cell)
        rounds = '  '.join(f'{v}: ' + ' '.join('%.2f' % x[0] for x in d[v]) for v in variants if v in d)
        print(f'{op:14s} {b:10d}  ' + '   '.join(cells) + '   | ' + rounds)

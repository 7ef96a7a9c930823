# Summary of run_ab.sh's CSVs: per call and size, mccl's time in µs at main (old) and with
# self Send/Recv pairs as copies (new), the median of the rounds and the best round, and
# MPI's time (the same processes, the median of every round of both). This machine moves
# dirty cache lines between its two vCPUs in one of two states, 2–8x apart (README), which
# changes from run to run with the memory a run gets: the best round is the fast state's.
import csv, sys, glob, statistics as st, collections
d = sys.argv[1] if len(sys.argv) > 1 else '.'
for np in ('np2', 'np4'):
    t = collections.defaultdict(list)
    mpi = collections.defaultdict(list)
    for v in ('old', 'new'):
        for f in glob.glob(f'{d}/{np}_{v}_*.csv'):
            for row in csv.DictReader(open(f)):
                t[(row['op'], int(row['bytes']), v)].append(float(row['time_us']))
                mpi[(row['op'], int(row['bytes']))].append(float(row['mpi_time_us']))
    keys = sorted({(k[0], k[1]) for k in t})
    print(f'## {np}: mccl µs old -> new: median of rounds | best round; MPI median; MPI/mccl best old -> new')
    for op, b in keys:
        o, n = t[(op, b, 'old')], t[(op, b, 'new')]
        if not o or not n: continue
        m = st.median(mpi[(op, b)])
        print(f'{op:9s} {b:9d}  {st.median(o):8.1f} -> {st.median(n):8.1f} | {min(o):8.1f} -> {min(n):8.1f}'
              f'   MPI {m:8.1f}   {m / min(o):5.2f} -> {m / min(n):5.2f}')

import csv,sys,glob,statistics as st,collections
d=sys.argv[1]
for np in ('np2','np4','noshm'):
  t=collections.defaultdict(list)
  for v in ('old','new'):
    for f in glob.glob(f'{d}/{np}_{v}_*.csv'):
      for row in csv.DictReader(open(f)):
        t[(row['op'],int(row['bytes']),v)].append((float(row['time_us']),float(row['mpi_time_us'])))
  keys=sorted({(k[0],k[1]) for k in t})
  print(f'## {np}: mccl us old -> new (MPI/mccl old -> new), median of rounds')
  for op,b in keys:
    o=t[(op,b,'old')]; n=t[(op,b,'new')]
    if not o or not n: continue
    mo=st.median(x[0] for x in o); mn=st.median(x[0] for x in n)
    ro=st.median(x[1]/x[0] for x in o); rn=st.median(x[1]/x[0] for x in n)
    print(f'{op:10s} {b:6d}  {mo:7.3f} -> {mn:7.3f}   ({ro:5.2f} -> {rn:5.2f})')

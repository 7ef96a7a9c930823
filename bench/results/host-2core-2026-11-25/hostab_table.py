import re,collections,sys
# per run, the bench's own ratio (MPI time / mccl time, same process pair); medians over runs
d=collections.defaultdict(list); k=None; op=None; ops=[]; vs=[]
for l in open(sys.argv[1]):
    m=re.match(r'== (\w+) r',l)
    if m:
        k=m.group(1)
        if k not in vs: vs.append(k)
        continue
    m=re.match(r'## (\w+)',l)
    if m:
        op=m.group(1)
        if op not in ops: ops.append(op)
        continue
    f=l.split()
    if len(f)==8 and f[0].isdigit(): d[(op,int(f[0]),k)].append((float(f[1]),float(f[5])))
med=lambda v: sorted(v)[len(v)//2]
print("| op | bytes | " + " | ".join(f"{v}: mccl µs, MPI µs, MPI/mccl (median of runs)" for v in vs) + " |")
print("|---|---:|" + "---:|"*len(vs))
for op in ops:
  for b in sorted(set(x[1] for x in d if x[0]==op)):
    cells=[]
    for v in vs:
        t=d.get((op,b,v),[])
        if not t: cells.append('-'); continue
        cells.append(f"{med([x[0] for x in t]):.2f}, {med([x[1] for x in t]):.2f}, {med([x[1]/x[0] for x in t]):.2f}")
    print(f"| {op} | {b} | " + " | ".join(cells) + " |")

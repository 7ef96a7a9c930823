import sys,re,collections
# blocks "== KIND rN PROTO TYPE N ranks" ; rows op bytes host eager graph
data=collections.defaultdict(list)
key=None
for line in open(sys.argv[1]):
    m=re.match(r"== (before|now) r(\d) (.*)",line)
    if m: key=(m.group(1),m.group(3).strip()); continue
    f=line.split()
    if key and len(f)==5 and f[1].isdigit():
        data[(key[1],f[0],int(f[1]),key[0])].append((float(f[3]),float(f[4])))
cases=sorted(set((k[0],k[1],k[2]) for k in data))
print("| case | op | bytes | eager before | eager now | ratio | graph before | graph now | ratio |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for c in cases:
    b=data.get(c+("before",)); n=data.get(c+("now",))
    if not b or not n: continue
    eb=min(x[0] for x in b); en=min(x[0] for x in n); gb=min(x[1] for x in b); gn=min(x[1] for x in n)
    print(f"| {c[0]} | {c[1]} | {c[2]} | {eb:.2f} | {en:.2f} | {en/eb:.2f} | {gb:.2f} | {gn:.2f} | {gn/gb:.2f} |")

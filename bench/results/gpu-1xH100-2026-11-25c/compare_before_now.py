import sys,re,collections
def parse(f):
    d=collections.defaultdict(dict); cur=None
    for line in open(f):
        m=re.match(r'== (\w+) r\d (.*)',line)
        if m: cur=(m.group(2).strip(),m.group(1)); continue
        p=line.split()
        if cur and len(p)==5 and p[1].isdigit():
            k=(cur[0],p[0],int(p[1]))
            g=float(p[4]); d[k][cur[1]]=min(d[k].get(cur[1],1e9),g)
    return d
d=parse(sys.argv[1])
print("| mode | op | bytes | before µs | now µs | ratio |")
print("|---|---|---:|---:|---:|---:|")
for k in d:
    if "before" in d[k] and "now" in d[k]:
        a,b=d[k]["before"],d[k]["now"]
        print(f"| {k[0]} | {k[1]} | {k[2]} | {a:.2f} | {b:.2f} | {b/a:.2f} |")

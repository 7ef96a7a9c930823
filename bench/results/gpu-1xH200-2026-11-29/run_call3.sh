#!/usr/bin/env bash
# Call 3 (one H200, two ranks as threads sharing it): call 1's A/B again with a control, the
# LL128 AllGather (its kernel, llKernel<true, LeanCopy>, is the same in both builds), and
# MCCL_PROFILE's phases of an LL128 AllReduce of 1 MiB in each build.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
TB=$B/mccl-threads-bench
for r in 1 2; do
  for v in old new; do
    lp=$L; [ $v = old ] && lp=$L/old:$L
    LD_LIBRARY_PATH=$lp NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=16 timeout 60 $TB -r 2 -b 256K -e 4M -f 2 -n 100 -G 20 \
      -o allgather,allreduce > $W/tb_${v}_$r.txt 2>&1 || echo "tb $v $r rc=$?" >> $W/errors.txt
  done
done
for v in old new; do
  lp=$L; [ $v = old ] && lp=$L/old:$L
  LD_LIBRARY_PATH=$lp NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=16 MCCL_PROFILE=1 timeout 60 $TB -r 2 -b 1M -e 1M -n 200 -G 0 \
    -o allreduce > $W/prof_$v.txt 2>&1
  echo "== profile $v"; tail -14 $W/prof_$v.txt
done | tee $OUT/profile.txt
python3 - "$W" <<'PY' | tee $OUT/summary.txt
import sys, glob, re
W = sys.argv[1]
d = {}
for f in sorted(glob.glob(f"{W}/tb_*_*.txt")):
    v = re.search(r"tb_(old|new)_", f).group(1)
    for line in open(f):
        p = line.split()
        if len(p) == 5 and not line.startswith("#") and p[1].isdigit():
            d.setdefault((p[0], int(p[1])), {}).setdefault(v, []).append((float(p[3]), float(p[4])))
print("== eager and graph us per call (min of rounds), old -> new, ratio old/new (>1: new faster)")
for (op, b), vs in sorted(d.items()):
    if "old" not in vs or "new" not in vs: continue
    oe, og = min(x[0] for x in vs["old"]), min(x[1] for x in vs["old"])
    ne, ng = min(x[0] for x in vs["new"]), min(x[1] for x in vs["new"])
    print(f"{op:16s} {b:9d}  eager {oe:7.2f} -> {ne:7.2f} ({oe/ne:5.3f})   graph {og:7.2f} -> {ng:7.2f} ({og/ng:5.3f})")
PY
[ -f $W/errors.txt ] && cat $W/errors.txt
tar -czf "$OUT/call3.tgz" -C "$W" .

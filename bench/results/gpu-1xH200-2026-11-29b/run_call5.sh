#!/usr/bin/env bash
# Call 5 (one H200, two ranks as threads sharing it): the first work's connections and step
# words loaded at the block's entry (entry_prefetch_not_landed.diff; MCCL_PDL=0 in both), new,
# against the same library with main's Simple kernel (old/), rounds interleaved: Simple
# 256 KiB - 16 MiB. Both are experiment builds over call 2's objects (their LL kernels carry
# the 32-bit divisions, the same in both): only simple_kernel.cu differs between them.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
TB=$B/mccl-threads-bench
export MCCL_PDL=0
for r in 1 2 3; do
  for v in old new; do
    lp=$L; [ $v = old ] && lp=$L/old:$L
    [ $SECONDS -lt 520 ] || continue
    LD_LIBRARY_PATH=$lp NCCL_PROTO=Simple timeout 60 $TB -r 2 -b 256K -e 16M -f 4 -n 50 -G 10 \
      -o allreduce,reducescatter,allgather,broadcast,sendrecv > $W/tbs_${v}_$r.txt 2>&1 || echo "tbs $v $r rc=$?" >> $W/errors.txt
    LD_LIBRARY_PATH=$lp NCCL_PROTO=LL timeout 60 $TB -r 2 -b 8 -e 64K -f 8 -n 100 -G 20 \
      -o allreduce,reducescatter,allgather,sendrecv > $W/tbl_${v}_$r.txt 2>&1 || echo "tbl $v $r rc=$?" >> $W/errors.txt
    LD_LIBRARY_PATH=$lp NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=16 timeout 60 $TB -r 2 -b 256K -e 2M -f 2 -n 100 -G 20 \
      -o allreduce,reducescatter > $W/tbk_${v}_$r.txt 2>&1 || echo "tbk $v $r rc=$?" >> $W/errors.txt
  done
done
python3 - "$W" <<'PY' | tee $OUT/summary.txt
import sys, glob, re
W = sys.argv[1]
for pre, name in (("tbs", "Simple"), ("tbl", "LL"), ("tbk", "LL128, 16 channels")):
    d = {}
    for f in sorted(glob.glob(f"{W}/{pre}_*_*.txt")):
        v = re.search(rf"{pre}_(old|new)_", f).group(1)
        for line in open(f):
            p = line.split()
            if len(p) == 5 and not line.startswith("#") and p[1].isdigit():
                d.setdefault((p[0], int(p[1])), {}).setdefault(v, []).append((float(p[3]), float(p[4])))
    print(f"== {name}: us per call, eager and graph (min of rounds), old -> new, ratio old/new (>1: new faster); rounds")
    for (op, b), vs in sorted(d.items()):
        if "old" not in vs or "new" not in vs: continue
        oe, og = min(x[0] for x in vs["old"]), min(x[1] for x in vs["old"])
        ne, ng = min(x[0] for x in vs["new"]), min(x[1] for x in vs["new"])
        print(f"{op:14s} {b:9d}  eager {oe:7.2f} -> {ne:7.2f} ({oe/ne:5.3f})   graph {og:7.2f} -> {ng:7.2f} ({og/ng:5.3f})"
              f"   old {' '.join('%.2f' % x[0] for x in vs['old'])} new {' '.join('%.2f' % x[0] for x in vs['new'])}")
PY
[ -f $W/errors.txt ] && cat $W/errors.txt
tar -czf "$OUT/call5.tgz" -C "$W" .

#!/usr/bin/env bash
# Call 1 (one H200, ranks as threads sharing it; the first try, with cuobjdump of both
# libraries and the tests first, ran past 600 s and returned nothing): the LL128 reduction kernels with their
# copies at the reductions' lines (new) against main (old/): mccl-threads-bench LL128 A/B,
# rounds interleaved, then the LL128 tests at 2 and 3 ranks (timed out ones say rc=124).
# Not NVLink: the peer's memory is this GPU's (kernel-side costs only).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
TB=$B/mccl-threads-bench
for r in 1 2; do
  for v in old new; do
    lp=$L; [ $v = old ] && lp=$L/old:$L
    LD_LIBRARY_PATH=$lp NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=16 timeout 60 $TB -r 2 -b 256K -e 4M -f 2 -n 100 -G 20 \
      -o allreduce,reducescatter,allreduce_max > $W/tb_${v}_$r.txt 2>&1 || echo "tb $v $r rc=$?" >> $W/errors.txt
    LD_LIBRARY_PATH=$lp NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=4 MCCL_LL128_TWO_SHOT=2 timeout 40 $TB -r 3 -b 1M -e 4M -f 4 -n 100 -G 20 \
      -o allreduce > $W/tb3_${v}_$r.txt 2>&1 || echo "tb3 $v $r rc=$?" >> $W/errors.txt
  done
done
python3 - "$W" <<'PY' | tee $OUT/summary.txt
import sys, glob, re, statistics as st
W = sys.argv[1]
for pre in ("tb", "tb3"):
    d = {}
    for f in sorted(glob.glob(f"{W}/{pre}_*_*.txt")):
        v = re.search(rf"{pre}_(old|new)_", f).group(1)
        for line in open(f):
            p = line.split()
            if len(p) == 5 and not line.startswith("#") and p[1].isdigit():
                d.setdefault((p[0], int(p[1])), {}).setdefault(v, []).append((float(p[3]), float(p[4])))
    print(f"== {pre}: eager and graph us per call (min of rounds), old -> new, ratio old/new (>1: new faster)")
    for (op, b), vs in sorted(d.items()):
        if "old" not in vs or "new" not in vs: continue
        oe, og = min(x[0] for x in vs["old"]), min(x[1] for x in vs["old"])
        ne, ng = min(x[0] for x in vs["new"]), min(x[1] for x in vs["new"])
        print(f"{op:16s} {b:9d}  eager {oe:7.2f} -> {ne:7.2f} ({oe/ne:5.3f})   graph {og:7.2f} -> {ng:7.2f} ({og/ng:5.3f})")
PY
[ -f $W/errors.txt ] && cat $W/errors.txt
for nr in 2 3; do
  for p in LL128; do
    [ $SECONDS -lt 420 ] || continue
    env MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=$((nr > 2 ? 4 : 16)) \
      $([ $p != default ] && echo NCCL_PROTO=$p) timeout 60 $B/mccl_gpu_tests \
      --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.PointToPointPatterns' > $W/t_${nr}_$p.log 2>&1
    res "tests $nr ranks $p" $? $W/t_${nr}_$p.log; cp $T $OUT/tests.txt
  done
done
# Two-shot LL128 AllReduce (its copy phase runs in the reduction kernel) on 3 ranks.
[ $SECONDS -lt 480 ] &&
env MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=4 NCCL_PROTO=LL128 MCCL_LL128_TWO_SHOT=2 \
  timeout 60 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm' > $W/t_3_twoshot.log 2>&1
res "tests 3 ranks LL128 two-shot" $? $W/t_3_twoshot.log
cat $T
tar -czf "$OUT/call1.tgz" -C "$W" .

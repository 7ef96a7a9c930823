#!/usr/bin/env bash
# Call 3 (call 2's build): where AllReduce's final data starts to gain on the user-buffer
# path (plain buffers, 4 - 16 MiB, path at every size against off, three rounds), 2 GiB
# with NCCL beside, and the ring with three ranks: the single-process tests with three
# ranks on the two GPUs (MCCL_SHARED_GPU=1, same-process peers write straight into each
# other's outputs), the path forced at every size on Simple.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call3.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
F='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SimpleUnits*:GpuSingleProcess.GraphCaptureReplayedThousandTimes:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol:GpuSingleProcess.LargeBuffers'
LD_LIBRARY_PATH=$L MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 MCCL_USER_BUFFERS_MIN_BYTES=1 NCCL_PROTO=Simple timeout 240 $B/mccl_gpu_tests --gtest_filter="$F" > $W/single3.log 2>&1; echo "rc=$?" >> $W/single3.log
LD_LIBRARY_PATH=$L MCCL_USER_BUFFERS_MIN_BYTES=1 timeout 200 $B/mccl_gpu_tests --gtest_filter="$F" > $W/single2.log 2>&1; echo "rc=$?" >> $W/single2.log
pack
T="-b 4M -e 16M -f 1.26 -t 1 -w 3 -n 40 -c 0 -R 0 -o allreduce"
for round in 1 2 3; do
  $M -x MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1 $B/mccl-perf $T --csv $W/T_arall_$round.csv > $W/T_arall_$round.log 2>&1
  $M -x MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1000000000000 $B/mccl-perf $T --csv $W/T_aroff_$round.csv > $W/T_aroff_$round.log 2>&1
done
pack
P="-b 2G -e 2G -t 1 -w 2 -n 10 -c 0 -R 0 -o allreduce"
for round in 1 2; do
  $M -x MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1 $B/mccl-perf $P --csv $W/B_arall_$round.csv > $W/B_arall_$round.log 2>&1
  $M -x MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1000000000000 $B/mccl-perf $P --csv $W/B_aroff_$round.csv > $W/B_aroff_$round.log 2>&1
  $M $B/nccl-perf $P --csv $W/B_nccl_$round.csv > $W/B_nccl_$round.log 2>&1
done
pack
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, '[TB]_*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
for mode, vs in (('T', ['arall', 'aroff']), ('B', ['arall', 'aroff', 'nccl'])):
    print('\n%s: op bytes | %s | %s (time ratios of medians to %s, >1: %s faster)' % (mode, ' | '.join(vs), ' | '.join(v + '/' + vs[0] for v in vs[1:]), vs[0], vs[0]))
    for key in sorted(k for k in t if k[0] == mode):
        d = t[key]
        med = lambda v: sorted(d[v])[len(d[v]) // 2] if d[v] else float('nan')
        print(key[1], key[2], '|', ' | '.join('/'.join('%.1f' % x for x in d[v]) for v in vs),
              '|', ' | '.join('%.3f' % (med(v) / med(vs[0])) for v in vs[1:]),
              '| busbw ' + ' / '.join('%.1f' % (key[2] / med(v) / 1e3) for v in vs) + ' GB/s')
PY
grep -aH "rc=\|^\[  FAILED\|PASSED\|FAILED  \]\|OK \]" $W/*.log | head -40 >> $W/summary.txt
cat $W/summary.txt
pack

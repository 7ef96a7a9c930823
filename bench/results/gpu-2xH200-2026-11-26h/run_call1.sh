#!/usr/bin/env bash
# Call 1: programmatic dependent launch for every LL-family and Simple launch (MCCL_PDL;
# before, the lean LL kernels only). The same build with MCCL_PDL=1 (pdl) and 0 (nopdl),
# interleaved, three rounds, eager and in CUDA graphs, 128 KiB - 8 MiB (the sizes the lean
# kernel does not run) and 8 B for the lean kernel; NCCL beside. Then the chained test
# (every protocol's launch behind another's, PDL on and off) and -c 1 checks.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call1.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
OPS=allreduce,allgather,reducescatter,broadcast,reduce,sendrecv,alltoall
G="-b 128K -e 8M -f 2 -t 3 -c 0 -o $OPS"
for round in 1 2 3; do
  for v in pdl nopdl; do
    pdl=1; [ $v = nopdl ] && pdl=0
    $M -x MCCL_PDL=$pdl $B/mccl-perf $G -G 20 --csv $W/graph_${v}_$round.csv > $W/graph_${v}_$round.log 2>&1 || echo "$v graph failed"
    $M -x MCCL_PDL=$pdl $B/mccl-perf $G -n 300 --csv $W/eager_${v}_$round.csv > $W/eager_${v}_$round.log 2>&1 || echo "$v eager failed"
  done
done
$M $B/nccl-perf $G -G 20 --csv $W/graph_nccl_1.csv > $W/graph_nccl_1.log 2>&1
$M $B/nccl-perf $G -n 300 --csv $W/eager_nccl_1.csv > $W/eager_nccl_1.log 2>&1
$M $B/nccl-perf $G -R 1 -n 300 --csv $W/eager_ncclreg_1.csv > $W/eager_ncclreg_1.log 2>&1
$M $B/nccl-perf $G -R 2 -n 300 --csv $W/eager_ncclwin_1.csv > $W/eager_ncclwin_1.log 2>&1
pack
L8="-b 8 -e 8 -t 3 -c 0 -o allreduce,allgather,sendrecv"
for v in pdl nopdl; do
  pdl=1; [ $v = nopdl ] && pdl=0
  $M -x MCCL_PDL=$pdl $B/mccl-perf $L8 -G 100 --csv $W/graph_${v}_8.csv > $W/graph_${v}_8.log 2>&1
done
LD_LIBRARY_PATH=$L timeout 200 $B/mccl_gpu_tests --gtest_filter='*Chained*:*TwoCommunicatorsOneStream*:*GraphCaptureReplayed*' > $W/gpu_chained.log 2>&1; echo "rc=$?" >> $W/gpu_chained.log
timeout 120 $M $B/mccl-perf -b 8 -e 32M -f 4 -c 1 -n 20 -w 3 -t 1 -o $OPS > $W/check.log 2>&1; echo "check rc=$?" >> $W/check.log
timeout 120 $M $B/mccl-perf -b 8 -e 8M -f 8 -c 1 -n 50 -w 3 -t 1 -G 10 -o $OPS > $W/check_graph.log 2>&1; echo "check rc=$?" >> $W/check_graph.log
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, '*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
print('mode op bytes | pdl (3 rounds) | nopdl | nccl | ncclreg | ncclwin | nopdl/pdl (median) | nccl best/pdl')
for key in sorted(t):
    d = t[key]
    med = lambda v: sorted(d[v])[len(d[v]) // 2] if d[v] else float('nan')
    best = min([med(v) for v in ('nccl', 'ncclreg', 'ncclwin') if d[v]] or [float('nan')])
    print(*key, '|', ' | '.join('/'.join('%.2f' % x for x in d[v]) for v in ['pdl', 'nopdl', 'nccl', 'ncclreg', 'ncclwin']),
          '| %.3f | %.3f' % (med('nopdl') / med('pdl'), best / med('pdl')))
PY
{ grep -H "rc=\|FAILED\|PASSED\|wrong\|mismatch" $W/*.log | grep -v "OK \]"; } >> $W/summary.txt
cat $W/summary.txt
pack

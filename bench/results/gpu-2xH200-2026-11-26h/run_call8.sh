#!/usr/bin/env bash
# Call 8: programmatic dependent launch for the direct kernels of symmetric windows (they
# wait for the previous grid before reading their epoch). This build (now) against the
# final build of call 7 (base), on windows (-R 2), interleaved, three rounds, eager and in
# graphs, 8 B - 8 MiB; the copy engines (NCCL_CTA_POLICY=2) at 1 and 4 MiB; NCCL on windows
# beside; then the window tests and -c 1 checks on windows.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call8.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
G="-b 8 -e 8M -f 4 -t 3 -c 0 -R 2 -o allreduce,reducescatter,allgather,broadcast,reduce"
C="-b 1M -e 4M -f 4 -t 3 -c 0 -R 2 -o allgather,broadcast"
for round in 1 2 3; do
  for v in now base; do
    lp=$L; [ $v = base ] && lp=$L/ab/base:$L
    $M -x LD_LIBRARY_PATH=$lp $B/mccl-perf $G -G 20 --csv $W/graph_${v}_$round.csv > $W/graph_${v}_$round.log 2>&1 || echo "$v graph failed"
    $M -x LD_LIBRARY_PATH=$lp $B/mccl-perf $G -n 300 --csv $W/eager_${v}_$round.csv > $W/eager_${v}_$round.log 2>&1 || echo "$v eager failed"
    $M -x LD_LIBRARY_PATH=$lp -x NCCL_CTA_POLICY=2 $B/mccl-perf $C -n 300 --csv $W/ce_${v}_$round.csv > $W/ce_${v}_$round.log 2>&1 || echo "$v ce failed"
  done
done
$M -x LD_LIBRARY_PATH=$L $B/nccl-perf $G -n 300 --csv $W/eager_ncclR2_1.csv > $W/eager_ncclR2.log 2>&1
$M -x LD_LIBRARY_PATH=$L $B/nccl-perf $G -G 20 --csv $W/graph_ncclR2_1.csv > $W/graph_ncclR2.log 2>&1
$M -x LD_LIBRARY_PATH=$L -x NCCL_CTA_POLICY=2 $B/nccl-perf $C -n 300 --csv $W/ce_ncclR2_1.csv > $W/ce_ncclR2.log 2>&1
pack
timeout 120 $M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 8 -e 32M -f 4 -c 1 -n 20 -w 3 -t 1 -R 2 -o allreduce,reducescatter,allgather,broadcast,reduce > $W/check.log 2>&1; echo "check rc=$?" >> $W/check.log
timeout 120 $M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 8 -e 8M -f 8 -c 1 -n 30 -w 3 -t 1 -G 10 -R 2 -o allreduce,reducescatter,allgather,broadcast,reduce > $W/check_graph.log 2>&1; echo "check rc=$?" >> $W/check_graph.log
LD_LIBRARY_PATH=$L timeout 150 $B/mccl_gpu_tests --gtest_filter='*Window*:*Chained*:*LoneCallsReusePlans*' > $W/gpu.log 2>&1; echo "rc=$?" >> $W/gpu.log
LD_LIBRARY_PATH=$L MCCL_TEST_QUICK=1 timeout 100 $M -x LD_LIBRARY_PATH -x MCCL_TEST_QUICK $B/mccl_gpu_mpi_tests > $W/mpi.log 2>&1; echo "rc=$?" >> $W/mpi.log
LD_LIBRARY_PATH=$L timeout 60 $M -x LD_LIBRARY_PATH $B/mccl_gpu_devapi_tests > $W/devapi.log 2>&1; echo "rc=$?" >> $W/devapi.log
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, '*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
vs = ['now', 'base', 'ncclR2']
print('mode op bytes (windows) |', ' | '.join(vs), '| base/now (median) | NCCL/now')
for key in sorted(t):
    d = t[key]
    med = lambda v: sorted(d[v])[len(d[v]) // 2] if d[v] else float('nan')
    print(*key, '|', ' | '.join('/'.join('%.2f' % x for x in d[v]) for v in vs),
          '| %.3f | %.3f' % (med('base') / med('now'), med('ncclR2') / med('now')))
PY
grep -aH "rc=\|^\[  FAILED\|PASSED" $W/*.log >> $W/summary.txt
cat $W/summary.txt
pack

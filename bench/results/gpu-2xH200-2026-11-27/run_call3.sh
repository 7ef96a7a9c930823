#!/usr/bin/env bash
# Call 3: the user-buffer path after call 2 (closes of peers' mappings now asynchronous, on
# a thread of the importing process; no CUDA call on the service's threads before a
# request; the FIFO region's layout as before; AllGather from 4 MiB a rank only by
# default). Tests first (every MPI GPU test, quick; the single-process tests with the path
# forced on every size; -c 1 checks), then AllGather: mccl registered (-R 1) with the path
# (ub1) and without (ub0), plain (-R 0) with it on any buffer (ub2) and without, NCCL
# beside in both modes, eager 1 MiB - 1 GiB, two rounds, and in graphs 4 - 256 MiB.
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
MCCL_TEST_QUICK=1 timeout 240 $M -x MCCL_TEST_QUICK $B/mccl_gpu_mpi_tests > $W/mpi.log 2>&1; echo "rc=$?" >> $W/mpi.log
pack
C="-b 8 -e 64M -f 8 -c 1 -n 5 -w 2 -t 1 -o allgather,broadcast,sendrecv,alltoall,gather,scatter"
timeout 100 $M $B/mccl-perf $C -R 1 > $W/check_R1.log 2>&1; echo "rc=$?" >> $W/check_R1.log
timeout 100 $M -x MCCL_USER_BUFFERS=2 $B/mccl-perf $C -R 0 > $W/check_R0ub2.log 2>&1; echo "rc=$?" >> $W/check_R0ub2.log
timeout 100 $M -x MCCL_USER_BUFFERS=2 $B/mccl-perf $C -R 0 -G 5 > $W/check_graph_ub2.log 2>&1; echo "rc=$?" >> $W/check_graph_ub2.log
pack
P="-b 1M -e 1G -f 4 -t 1 -w 3 -n 20 -c 0 -o allgather"
G="-b 4M -e 256M -f 4 -t 1 -w 2 -n 10 -G 10 -c 0 -o allgather"
for round in 1 2; do
  $M $B/mccl-perf $P -R 1 --csv $W/R1_ub1_$round.csv > $W/R1_ub1_$round.log 2>&1 || echo "ub1 failed" >> $W/fail.txt
  $M -x MCCL_USER_BUFFERS=0 $B/mccl-perf $P -R 1 --csv $W/R1_ub0_$round.csv > $W/R1_ub0_$round.log 2>&1
  $M $B/nccl-perf $P -R 1 --csv $W/R1_nccl_$round.csv > $W/R1_nccl_$round.log 2>&1
  $M -x MCCL_USER_BUFFERS=2 $B/mccl-perf $P -R 0 --csv $W/R0_ub2_$round.csv > $W/R0_ub2_$round.log 2>&1 || echo "R0 ub2 failed" >> $W/fail.txt
  $M $B/mccl-perf $P -R 0 --csv $W/R0_ub0_$round.csv > $W/R0_ub0_$round.log 2>&1
  $M $B/nccl-perf $P -R 0 --csv $W/R0_nccl_$round.csv > $W/R0_nccl_$round.log 2>&1
done
$M $B/mccl-perf $G -R 1 --csv $W/G1_ub1_1.csv > $W/G1_ub1.log 2>&1 || echo "graph ub1 failed" >> $W/fail.txt
$M -x MCCL_USER_BUFFERS=0 $B/mccl-perf $G -R 1 --csv $W/G1_ub0_1.csv > $W/G1_ub0.log 2>&1
$M $B/nccl-perf $G -R 1 --csv $W/G1_nccl_1.csv > $W/G1_nccl.log 2>&1
pack
LD_LIBRARY_PATH=$L MCCL_USER_BUFFERS=2 MCCL_USER_BUFFERS_MIN_BYTES=1 timeout 200 $B/mccl_gpu_tests --gtest_filter='*PointToPoint*:*AlltoAll*:*Simple*:*Graph*:*EveryTypeOpAndForm:*SelfSendRecv*:*MemAlloc*' > $W/single_ub2.log 2>&1; echo "rc=$?" >> $W/single_ub2.log
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, '[RG]*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
for mode, vs in (('R1', ['ub1', 'ub0', 'nccl']), ('R0', ['ub2', 'ub0', 'nccl']), ('G1', ['ub1', 'ub0', 'nccl'])):
    print('\n%s: op bytes | %s | %s/%s | nccl/%s (time ratios of medians, >1: %s faster)' % (mode, ' | '.join(vs), vs[1], vs[0], vs[0], vs[0]))
    for key in sorted(k for k in t if k[0] == mode):
        d = t[key]
        med = lambda v: sorted(d[v])[len(d[v]) // 2] if d[v] else float('nan')
        print(key[1], key[2], '|', ' | '.join('/'.join('%.1f' % x for x in d[v]) for v in vs),
              '| %.3f | %.3f' % (med(vs[1]) / med(vs[0]), med('nccl') / med(vs[0])))
PY
grep -aH "rc=\|^\[  FAILED\|PASSED\|FAILED  \]\|OK \]" $W/*.log | head -60 >> $W/summary.txt
grep -a "\[memory\]" $W/mpi.log >> $W/summary.txt
cat $W/fail.txt >> $W/summary.txt 2>/dev/null
cat $W/summary.txt
pack

#!/usr/bin/env bash
# Call 2 (call 1 crashed at init: the import service was started before the topology was built): the user-buffer path (Simple AllGather, Broadcast and Send/Recv-based calls write
# straight into the receiver's output, imported into the sender's process). Tests first
# (the new MPI test, the MPI GPU tests, single-process tests with the path forced on
# same-process peers, -c 1 checks), then mccl against NCCL on registered (-R 1) and plain
# (-R 0) buffers, 1 MiB - 1 GiB, two rounds: mccl registered with the path (ub1) and
# without it (ub0), mccl plain with the path on any buffer (ub2) and without (ub0).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call2.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
timeout 240 $M -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=P2P $B/mccl_gpu_mpi_tests --gtest_filter='GpuMpi.UserBuffers*' > $W/ub_test.log 2>&1; echo "rc=$?" >> $W/ub_test.log
pack
OPS=allgather,broadcast,sendrecv,alltoall,gather,scatter
C="-b 8 -e 64M -f 8 -c 1 -n 5 -w 2 -t 1 -o $OPS"
timeout 100 $M -x MCCL_USER_BUFFERS=1 $B/mccl-perf $C -R 1 > $W/check_R1.log 2>&1; echo "rc=$?" >> $W/check_R1.log
timeout 100 $M -x MCCL_USER_BUFFERS=2 $B/mccl-perf $C -R 0 > $W/check_R0ub2.log 2>&1; echo "rc=$?" >> $W/check_R0ub2.log
timeout 100 $M -x MCCL_USER_BUFFERS=2 $B/mccl-perf $C -R 0 -G 5 > $W/check_graph_ub2.log 2>&1; echo "rc=$?" >> $W/check_graph_ub2.log
pack
P="-b 1M -e 1G -f 4 -t 1 -w 3 -n 20 -c 0 -o $OPS"
for round in 1 2; do
  $M -x MCCL_USER_BUFFERS=1 $B/mccl-perf $P -R 1 --csv $W/R1_ub1_$round.csv > $W/R1_ub1_$round.log 2>&1 || echo "ub1 failed" >> $W/fail.txt
  $M -x MCCL_USER_BUFFERS=0 $B/mccl-perf $P -R 1 --csv $W/R1_ub0_$round.csv > $W/R1_ub0_$round.log 2>&1 || echo "ub0 failed" >> $W/fail.txt
  $M $B/nccl-perf $P -R 1 --csv $W/R1_nccl_$round.csv > $W/R1_nccl_$round.log 2>&1
  $M -x MCCL_USER_BUFFERS=2 $B/mccl-perf $P -R 0 --csv $W/R0_ub2_$round.csv > $W/R0_ub2_$round.log 2>&1 || echo "R0 ub2 failed" >> $W/fail.txt
  $M -x MCCL_USER_BUFFERS=0 $B/mccl-perf $P -R 0 --csv $W/R0_ub0_$round.csv > $W/R0_ub0_$round.log 2>&1
  $M $B/nccl-perf $P -R 0 --csv $W/R0_nccl_$round.csv > $W/R0_nccl_$round.log 2>&1
  pack
done
LD_LIBRARY_PATH=$L MCCL_USER_BUFFERS=2 MCCL_USER_BUFFERS_MIN_BYTES=1 timeout 200 $B/mccl_gpu_tests --gtest_filter='*PointToPoint*:*AlltoAll*:*Simple*:*Graph*:*EveryTypeOpAndForm:*SelfSendRecv*:*MemAlloc*' > $W/single_ub2.log 2>&1; echo "rc=$?" >> $W/single_ub2.log
MCCL_TEST_QUICK=1 timeout 150 $M -x MCCL_TEST_QUICK $B/mccl_gpu_mpi_tests > $W/mpi.log 2>&1; echo "rc=$?" >> $W/mpi.log
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, 'R*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
for mode, vs in (('R1', ['ub1', 'ub0', 'nccl']), ('R0', ['ub2', 'ub0', 'nccl'])):
    print('\n%s: op bytes | %s | %s/%s | nccl/%s (time ratios of medians, >1: %s faster)' % (mode, ' | '.join(vs), vs[1], vs[0], vs[0], vs[0]))
    for key in sorted(k for k in t if k[0] == mode):
        d = t[key]
        med = lambda v: sorted(d[v])[len(d[v]) // 2] if d[v] else float('nan')
        print(key[1], key[2], '|', ' | '.join('/'.join('%.1f' % x for x in d[v]) for v in vs),
              '| %.3f | %.3f' % (med(vs[1]) / med(vs[0]), med('nccl') / med(vs[0])))
PY
grep -aH "rc=\|^\[  FAILED\|PASSED\|user buffers" $W/*.log | grep -v "^.*check.*user buffers" | head -60 >> $W/summary.txt
grep -ac "user buffers:" $W/ub_test.log >> $W/summary.txt
cat $W/fail.txt >> $W/summary.txt 2>/dev/null
cat $W/summary.txt
pack

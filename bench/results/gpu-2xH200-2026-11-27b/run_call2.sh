#!/usr/bin/env bash
# Call 2: a ring AllReduce's final data on the user-buffer path (the gather steps write
# into the peer's output; the reduce steps keep the FIFO), and call 1's sweep without
# runtime calls (atexit stop). Tests first (every MPI GPU test, quick, the user-buffer test
# now with AllReduce of every operator; PyTorch's checks), then AllReduce on plain buffers
# with the path at every size (arall: MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1) against it off
# (aroff), NCCL plain and registered beside, 1 MiB - 2 GiB, two rounds; in graphs; the
# AllGather sizes of call 1 again from 1 MiB (call 1's 4 MiB was the first size of a run);
# PyTorch all_reduce (bf16, in place on one tensor) with the path and without.
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
MCCL_TEST_QUICK=1 timeout 240 $M -x MCCL_TEST_QUICK $B/mccl_gpu_mpi_tests > $W/mpi.log 2>&1; echo "rc=$?" >> $W/mpi.log
timeout 120 $M -x LD_PRELOAD=$L/libmccl.so.0 python3 tests/gpu/torch_preload_check.py > $W/torch_check.log 2>&1; echo "rc=$?" >> $W/torch_check.log
C="-b 8 -e 64M -f 8 -c 1 -n 3 -w 1 -t 1 -o allreduce"
timeout 100 $M -x MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1 $B/mccl-perf $C -R 0 > $W/check_R0.log 2>&1; echo "rc=$?" >> $W/check_R0.log
timeout 100 $M -x MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1 $B/mccl-perf $C -R 0 -G 3 > $W/check_G0.log 2>&1; echo "rc=$?" >> $W/check_G0.log
pack
P="-b 1M -e 2G -f 4 -t 1 -w 3 -n 20 -c 0 -o allreduce"
for round in 1 2; do
  $M -x MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1 $B/mccl-perf $P -R 0 --csv $W/R_arall_$round.csv > $W/R_arall_$round.log 2>&1 || echo "arall failed" >> $W/fail.txt
  $M -x MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1000000000000 $B/mccl-perf $P -R 0 --csv $W/R_aroff_$round.csv > $W/R_aroff_$round.log 2>&1
  $M $B/nccl-perf $P -R 0 --csv $W/R_nccl_$round.csv > $W/R_nccl_$round.log 2>&1
  $M $B/nccl-perf $P -R 1 --csv $W/R_ncclreg_$round.csv > $W/R_ncclreg_$round.log 2>&1
done
G="-b 16M -e 1G -f 4 -t 1 -w 2 -n 10 -G 10 -c 0 -R 0 -o allreduce"
$M -x MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1 $B/mccl-perf $G --csv $W/G_arall_1.csv > $W/G_arall.log 2>&1 || echo "graph arall failed" >> $W/fail.txt
$M -x MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1000000000000 $B/mccl-perf $G --csv $W/G_aroff_1.csv > $W/G_aroff.log 2>&1
$M $B/nccl-perf $G --csv $W/G_nccl_1.csv > $W/G_nccl.log 2>&1
pack
A="-b 1M -e 64M -f 2 -t 1 -w 3 -n 20 -c 0 -R 0 -o allgather"
for round in 1 2; do
  $M $B/mccl-perf $A --csv $W/A_ub2_$round.csv > $W/A_ub2_$round.log 2>&1
  $M -x MCCL_USER_BUFFERS=1 $B/mccl-perf $A --csv $W/A_ub1_$round.csv > $W/A_ub1_$round.log 2>&1
done
pack
TP="-x MASTER_ADDR=127.0.0.1 -x OPS=allreduce -x SIZES=16777216,67108864,268435456,1073741824"
timeout 120 $M $TP python3 bench/torch_collectives.py > $W/torch_nccl.csv 2> $W/torch_nccl.err; echo "rc=$?" >> $W/torch_nccl.err
timeout 120 $M $TP -x LD_PRELOAD=$L/libmccl.so.0 -x MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1 python3 bench/torch_collectives.py > $W/torch_arall.csv 2> $W/torch_arall.err; echo "rc=$?" >> $W/torch_arall.err
timeout 120 $M $TP -x LD_PRELOAD=$L/libmccl.so.0 -x MCCL_USER_BUFFERS_ALLREDUCE_BYTES=1000000000000 python3 bench/torch_collectives.py > $W/torch_aroff.csv 2> $W/torch_aroff.err; echo "rc=$?" >> $W/torch_aroff.err
pack
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, '[RGA]_*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
for mode, vs in (('R', ['arall', 'aroff', 'nccl', 'ncclreg']), ('G', ['arall', 'aroff', 'nccl']), ('A', ['ub2', 'ub1'])):
    print('\n%s: op bytes | %s | %s (time ratios of medians to %s, >1: %s faster)' % (mode, ' | '.join(vs), ' | '.join(v + '/' + vs[0] for v in vs[1:]), vs[0], vs[0]))
    for key in sorted(k for k in t if k[0] == mode):
        d = t[key]
        med = lambda v: sorted(d[v])[len(d[v]) // 2] if d[v] else float('nan')
        bus = 2.0 * key[2] / 2 / med(vs[0]) / 1e3 if key[1] == 'allreduce' else key[2] / 2 / med(vs[0]) / 1e3
        print(key[1], key[2], '|', ' | '.join('/'.join('%.1f' % x for x in d[v]) for v in vs),
              '|', ' | '.join('%.3f' % (med(v) / med(vs[0])) for v in vs[1:]), '| %s busbw %.1f GB/s' % (vs[0], bus))
print('\ntorch all_reduce (op,bytes,time_us): nccl | arall | aroff')
rows = {}
for v in ('nccl', 'arall', 'aroff'):
    p = os.path.join(w, 'torch_%s.csv' % v)
    for line in open(p) if os.path.exists(p) else []:
        f = line.strip().split(',')
        if len(f) == 4 and f[0] != 'op':
            rows.setdefault((f[0], int(f[1])), {})[v] = (float(f[2]), float(f[3]))
for k in sorted(rows):
    d = rows[k]
    g = lambda v: d.get(v, (float('nan'),) * 2)
    print(k[0], k[1], '|', ' | '.join('%.1f (%.0f GB/s)' % g(v) for v in ('nccl', 'arall', 'aroff')),
          '| nccl/arall %.3f aroff/arall %.3f' % (g('nccl')[0] / g('arall')[0], g('aroff')[0] / g('arall')[0]))
PY
grep -aH "rc=\|^\[  FAILED\|PASSED\|FAILED  \]\|OK \]\|wrong\|checks\|rror" $W/*.log $W/*.err | head -60 >> $W/summary.txt
grep -a "\[memory\]" $W/mpi.log >> $W/summary.txt
cat $W/fail.txt >> $W/summary.txt 2>/dev/null
cat $W/summary.txt
pack

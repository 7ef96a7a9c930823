#!/usr/bin/env bash
# Call 1: plain cudaMalloc'ed outputs take the user-buffer path by default (imported at their
# second use, freed ones closed by the owner's sweep). Tests first (every MPI GPU test,
# quick, with the new three-kind user-buffer test; PyTorch's checks with libmccl
# preloaded), then AllGather on plain buffers: this build (ub2, the new default) against
# MCCL_USER_BUFFERS=1 (ub1, the old default) and NCCL plain and registered, eager 4 MiB -
# 1 GiB (2 rounds) and in graphs; PyTorch all_gather_into_tensor / reduce_scatter_tensor
# (bf16, a new tensor a call) on NCCL and on mccl (ub2, ub1); and the channels question
# of issue 13: the default against NCCL_MAX_NCHANNELS=24 for the LL/LL128 sizes.
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
MCCL_TEST_QUICK=1 timeout 240 $M -x MCCL_TEST_QUICK $B/mccl_gpu_mpi_tests > $W/mpi.log 2>&1; echo "rc=$?" >> $W/mpi.log
timeout 120 $M -x LD_PRELOAD=$L/libmccl.so.0 python3 tests/gpu/torch_preload_check.py > $W/torch_check.log 2>&1; echo "rc=$?" >> $W/torch_check.log
pack
P="-b 4M -e 1G -f 4 -t 1 -w 3 -n 20 -c 0 -o allgather"
G="-b 16M -e 256M -f 4 -t 1 -w 2 -n 10 -G 10 -c 0 -R 0 -o allgather"
for round in 1 2; do
  $M $B/mccl-perf $P -R 0 --csv $W/R0_ub2_$round.csv > $W/R0_ub2_$round.log 2>&1 || echo "ub2 failed" >> $W/fail.txt
  $M -x MCCL_USER_BUFFERS=1 $B/mccl-perf $P -R 0 --csv $W/R0_ub1_$round.csv > $W/R0_ub1_$round.log 2>&1
  $M $B/nccl-perf $P -R 0 --csv $W/R0_nccl_$round.csv > $W/R0_nccl_$round.log 2>&1
  $M $B/nccl-perf $P -R 1 --csv $W/R0_ncclreg_$round.csv > $W/R1_nccl_$round.log 2>&1
done
$M $B/mccl-perf $G --csv $W/G0_ub2_1.csv > $W/G0_ub2.log 2>&1 || echo "graph ub2 failed" >> $W/fail.txt
$M -x MCCL_USER_BUFFERS=1 $B/mccl-perf $G --csv $W/G0_ub1_1.csv > $W/G0_ub1.log 2>&1
$M $B/nccl-perf $G --csv $W/G0_nccl_1.csv > $W/G0_nccl.log 2>&1
pack
TP="-x MASTER_ADDR=127.0.0.1 -x SIZES=4194304,16777216,67108864,268435456,1073741824"
timeout 120 $M $TP python3 bench/torch_allgather.py > $W/torch_nccl.csv 2> $W/torch_nccl.err; echo "rc=$?" >> $W/torch_nccl.err
timeout 120 $M $TP -x LD_PRELOAD=$L/libmccl.so.0 python3 bench/torch_allgather.py > $W/torch_ub2.csv 2> $W/torch_ub2.err; echo "rc=$?" >> $W/torch_ub2.err
timeout 120 $M $TP -x LD_PRELOAD=$L/libmccl.so.0 -x MCCL_USER_BUFFERS=1 python3 bench/torch_allgather.py > $W/torch_ub1.csv 2> $W/torch_ub1.err; echo "rc=$?" >> $W/torch_ub1.err
pack
C="-b 64K -e 4M -f 2 -t 1 -w 5 -n 30 -c 0 -R 0 -o allreduce,allgather,reducescatter,broadcast,reduce,sendrecv,alltoall"
for round in 1 2; do
  $M $B/mccl-perf $C --csv $W/C_def_$round.csv > $W/C_def_$round.log 2>&1
  $M -x NCCL_MAX_NCHANNELS=24 $B/mccl-perf $C --csv $W/C_ch24_$round.csv > $W/C_ch24_$round.log 2>&1
  $M -x NCCL_MAX_NCHANNELS=16 $B/mccl-perf $C --csv $W/C_ch16_$round.csv > $W/C_ch16_$round.log 2>&1
done
$M $B/nccl-perf $C --csv $W/C_nccl_1.csv > $W/C_nccl.log 2>&1
pack
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, '[RGC]*_*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
for mode, vs in (('R0', ['ub2', 'ub1', 'nccl', 'ncclreg']), ('G0', ['ub2', 'ub1', 'nccl']), ('C', ['def', 'ch24', 'ch16', 'nccl'])):
    print('\n%s: op bytes | %s | %s (time ratios of medians to %s, >1: %s faster)' % (mode, ' | '.join(vs), ' | '.join(v + '/' + vs[0] for v in vs[1:]), vs[0], vs[0]))
    for key in sorted(k for k in t if k[0] == mode):
        d = t[key]
        med = lambda v: sorted(d[v])[len(d[v]) // 2] if d[v] else float('nan')
        print(key[1], key[2], '|', ' | '.join('/'.join('%.1f' % x for x in d[v]) for v in vs),
              '|', ' | '.join('%.3f' % (med(v) / med(vs[0])) for v in vs[1:]))
print('\ntorch (op,bytes,time_us,busbw): nccl | ub2 | ub1')
rows = {}
for v in ('nccl', 'ub2', 'ub1'):
    p = os.path.join(w, 'torch_%s.csv' % v)
    for line in open(p) if os.path.exists(p) else []:
        f = line.strip().split(',')
        if len(f) == 4 and f[0] != 'op':
            rows.setdefault((f[0], int(f[1])), {})[v] = float(f[2])
for k in sorted(rows):
    d = rows[k]
    print(k[0], k[1], '|', ' | '.join('%.1f' % d.get(v, float('nan')) for v in ('nccl', 'ub2', 'ub1')),
          '| nccl/ub2 %.3f ub1/ub2 %.3f' % (d.get('nccl', float('nan')) / d.get('ub2', float('nan')), d.get('ub1', float('nan')) / d.get('ub2', float('nan'))))
PY
grep -aH "rc=\|^\[  FAILED\|PASSED\|FAILED  \]\|OK \]\|wrong\|checks" $W/*.log $W/*.err | head -60 >> $W/summary.txt
grep -a "\[memory\]" $W/mpi.log >> $W/summary.txt
cat $W/fail.txt >> $W/summary.txt 2>/dev/null
cat $W/summary.txt
pack

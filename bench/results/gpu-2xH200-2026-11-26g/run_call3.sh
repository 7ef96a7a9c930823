#!/usr/bin/env bash
# Call 3: the landed sparse table (f4014af + fixes: the LL credit is the table word, no
# kernel-kept credit) against main before it (8cd5ce4, .carry/ab/main), interleaved, two
# rounds: graph and eager 8 B - 32 KiB, the new build with its default table (auto: whole
# at 2 ranks) and with MCCL_CONN_TABLE=sparse (heads in their own blocks, the LL sender
# reading its head when its FIFO is full); GPU init; -c 1 checks 8 B - 4 MiB under both
# tables; the memory test and every single-process GPU test.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call3.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
G="-b 8 -e 32K -f 64 -t 3 -c 0 -o allreduce,allgather,sendrecv"
for round in 1 2; do
  for v in main auto sparse; do
    lp=$L; [ $v = main ] && lp=$L/ab/main:$L
    $M -x LD_LIBRARY_PATH=$lp -x MCCL_CONN_TABLE=$v $B/mccl-perf $G -G 100 --csv $W/graph_${v}_$round.csv > $W/graph_${v}_$round.log 2>&1 || echo "$v graph failed"
    $M -x LD_LIBRARY_PATH=$lp -x MCCL_CONN_TABLE=$v $B/mccl-perf $G -n 1000 --csv $W/eager_${v}_$round.csv > $W/eager_${v}_$round.log 2>&1 || echo "$v eager failed"
  done
  for v in main auto; do
    lp=$L; [ $v = main ] && lp=$L/ab/main:$L
    timeout 60 $M -x LD_LIBRARY_PATH=$lp $B/mccl-init-bench --gpu 7 > $W/init_${v}_$round.log 2>&1 || echo "$v init failed"
  done
done
pack
for t in auto sparse; do
  timeout 60 $M -x LD_LIBRARY_PATH=$L -x MCCL_CONN_TABLE=$t $B/mccl-perf -b 8 -e 4M -f 8 -c 1 -n 30 -w 5 -t 1 -o allreduce,allgather,reducescatter,broadcast,reduce,sendrecv,alltoall > $W/check_$t.log 2>&1; echo "check rc=$?" >> $W/check_$t.log
done
timeout 60 $M -x LD_LIBRARY_PATH=$L -x MCCL_CONN_TABLE=sparse $B/mccl-perf -b 8 -e 64K -f 8 -c 1 -n 2000 -w 5 -t 1 -G 50 -o allreduce,sendrecv > $W/check_sparse_graph.log 2>&1; echo "check rc=$?" >> $W/check_sparse_graph.log
pack
LD_LIBRARY_PATH=$L timeout 100 $B/mccl_gpu_tests --gtest_filter='*ConnectionTable*' > $W/test_table.log 2>&1; echo "rc=$?" >> $W/test_table.log
pack
LD_LIBRARY_PATH=$L timeout 250 $B/mccl_gpu_tests --gtest_filter='-*ConnectionTable*' > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, '*_[12].csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
for key in sorted(t):
    print(*key, '  '.join('%s %s' % (v, '/'.join('%.2f' % x for x in t[key][v])) for v in ['main', 'auto', 'sparse']))
PY
{ grep -h "connection table\|control bytes" $W/test_table.log | head -8; grep -H "rc=\|FAILED\|PASSED\|tests ran" $W/*.log | grep -v "OK \]"; grep -h "fromMpi\|min" $W/init_*_1.log | head -6; } >> $W/summary.txt
cat $W/summary.txt
pack

#!/usr/bin/env bash
# Call 2 (one H200, ranks as threads sharing it): call 1's variant made to keep the
# specialisation that call 1 lost: a Simple kernel calls each collective's loop once (four
# inlined copies of step(), units or not, where there were eight; call 1 had one), a direct
# kernel's reductions go through two reduceOut a operator (into one output, into every
# rank's), and a one-hop LL128 reduction calls its loop with the work's own view (the phase
# loop only for two-shot works and copies). Against main before (old/) (the tests in call
# 3: the pack holds two builds of libmccl or the tests, not both under 64 MiB): Simple 256 KiB - 64 MiB, LL128 16 KiB - 1 MiB, windows, int8 max and
# double prod, old and new interleaved, five rounds.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
ln -sfn ab/old $B/old
OPS=allreduce,reducescatter,allgather,broadcast,sendrecv,alltoall
for r in 1 2 3 4 5; do
  for v in old new; do
    [ $SECONDS -lt 520 ] || continue
    tb simple $v $r "-r 2 -b 256K -e 64M -f 4 -n 20 -G 5 -o $OPS" NCCL_PROTO=Simple
    tb llx $v $r "-r 2 -b 16K -e 1M -f 4 -n 50 -G 10 -o $OPS" NCCL_PROTO=LL128
    tb win $v $r "-r 2 -b 8 -e 4M -f 8 -n 50 -G 10 -w -o allreduce,reducescatter,allgather,broadcast"
    tb ops $v $r "-r 2 -b 64K -e 16M -f 16 -n 20 -G 5 -d int8 -o allreduce_max,reducescatter_max"
    tb opsd $v $r "-r 2 -b 64K -e 16M -f 16 -n 20 -G 5 -d double -o allreduce_prod,reducescatter_prod"
  done
done
finish call2 simple llx win ops opsd

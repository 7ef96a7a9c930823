#!/usr/bin/env bash
# Call 2 (one GPU, the machine of call 1, still warm): main with the kernel parameters' hot
# fields first against main before it, side by side. Call 1 left main's pack unpacked in
# .carry; this call carries only base's libmccl (.carry-ab/ab.tar.xz, to .carry/ab/base).
# Alternating base and new: 8-byte MPI_Allreduce on two processes under MPS (micro_mpi_tiny,
# replayed and launched); two ranks as threads, 8 B - 64 KiB in graphs and eager
# (mccl-threads-bench); base's lean kernel's SASS.
cd "$(dirname "$0")/../../.."
if [ ! -f .carry/libmccl.so.0 ]; then echo "call 1's .carry is gone (a fresh machine): nothing to compare"; exit 3; fi
tar -xJf .carry-ab/ab.tar.xz -C .carry
. bench/device_call.sh
mpsStart
tinyAb 3 base new
mpsStop
for round in 1 2 3; do
  for v in base new; do
    tb tbab $v $round "-r 2 -b 8 -e 64K -f 8 -n 1000 -G 100 -o allreduce,allgather,broadcast,reducescatter,sendrecv"
  done
done
/usr/local/cuda/bin/cuobjdump -sass $L/ab/base/libmccl.so.0 2>&1 |
  awk '/Function :/ {on = ($0 ~ /llLeanKernelIfLb1ELi1E/)} on' | head -900 > $W/sass_base.txt
grep -oE 'c\[0x0\]\[0x[0-9a-f]+\]' $W/sass_base.txt | sort -u | tr '\n' ' ' > $W/sass_params_base.txt
echo "base lean kernel's parameter offsets: $(cat $W/sass_params_base.txt)" >> $T
finish call2 tbab

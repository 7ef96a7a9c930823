#!/usr/bin/env bash
# Call 3 (one H200): the staged reduction's elements with typed loads and stores; the SASS of
# plainReduceStaged<__half> (where float16's results had their low byte replaced); the
# plain-buffer tests again on 2 ranks as threads and on two processes sharing the GPU.
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export LD_LIBRARY_PATH=$PWD/$B NCCL_NVLS_ENABLE=0
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
$CUOBJ -sass $B/direct_kernel.cu.o > $OUT/sass_all.txt 2>&1
awk '/Function : .*plainReduceStagedI6__half/{f=1} f&&/Function : / && !/plainReduceStagedI6__half/{f=0} f' $OUT/sass_all.txt > $OUT/sass_half.txt
grep -c "" $OUT/sass_half.txt
grep -n "STG.E.U8\|STG.E.U16\|ST.E.U8\|ST.E.U16\|F2I\|F2F\|F2FP" $OUT/sass_half.txt | tail -30
rm -f $OUT/sass_all.txt
env MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 MCCL_TIMEOUT=10 timeout 150 $B/mccl_gpu_tests --gtest_filter='GpuPlainDirect.*' > $OUT/t2.log 2>&1
echo "threads rc=$?"; grep -a "OK \]\|FAILED \]" $OUT/t2.log; grep -a " is " $OUT/t2.log | head -5
timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -x MCCL_SHARED_GPU=2 \
  $B/mccl_gpu_mpi_tests --gtest_filter='GpuMpi.PlainBuffersDirect' > $OUT/mpi.log 2>&1
echo "mpi rc=$?"; grep -a "OK \]\|FAILED \]" $OUT/mpi.log | head -3; grep -a " is " $OUT/mpi.log | head -5

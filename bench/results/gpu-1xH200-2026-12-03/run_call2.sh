cd /work/main 2>/dev/null || true
B=.carry; [ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export LD_LIBRARY_PATH=$PWD/$B NCCL_NVLS_ENABLE=0
env MCCL_DUMP_SCHEDULE=1 MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 MCCL_TIMEOUT=10 timeout 120 $B/mccl_gpu_tests --gtest_filter='GpuPlainDirect.EveryTypeOpAndForm' > $OUT/dbg.log 2>&1
echo rc=$?
grep -a -c "DBG" $OUT/dbg.log
grep -a "DBG\|mccl rank 0\] seq" $OUT/dbg.log | grep -a -B2 -A2 "type 6 count 1 \|count 1 " | head -60
grep -a "is " $OUT/dbg.log | head -8

#!/usr/bin/env bash
# Call 1 (one H200): what landed this session and has not run on a GPU, first:
#  - the device API on two (and three) processes sharing the GPU: ncclSymPtr and
#    ncclCoopBcast (DevApi.SymPtrAndCoopBcast, written 2026-12-05 and never run), the LL
#    all-to-all (DevApi.LlAllToAllAcrossKernelsAndTheEpochWrap, new), and the rest;
#  - libmccl_mpi's new routes (MPI_Gather, MPI_Scatter, MPI_Allgatherv, MPI_Alltoallv,
#    MPI_Reduce_scatter on device buffers: PreloadGpu.VFormsGatherScatterOnDeviceBuffers)
#    with the other preload tests, on 2 and 3 processes sharing the GPU;
# then the unit tests with a GPU and the main single-process GPU tests on 2 ranks as threads
# sharing the GPU (the host-side changes of 2026-12-05 touch code the GPU path shares).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
MCCL_SHARED_GPU=2 timeout 150 $M -x MCCL_SHARED_GPU $B/mccl_gpu_devapi_tests > $W/devapi.log 2>&1
res "devapi np 2 sharing the GPU" $? $W/devapi.log
grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/devapi.log >> $T
MCCL_SHARED_GPU=2 timeout 100 ${M/-np 2/-np 3} -x MCCL_SHARED_GPU $B/mccl_gpu_devapi_tests \
  --gtest_filter='DevApi.LlAll*:DevApi.SymPtr*' > $W/devapi3.log 2>&1
res "devapi np 3 sharing the GPU" $? $W/devapi3.log
grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/devapi3.log >> $T
for np in 2 3; do
  MCCL_SHARED_GPU=2 timeout 120 ${M/-np 2/-np $np} -x MCCL_SHARED_GPU $B/mccl_preload_gpu_tests > $W/preload$np.log 2>&1
  res "preload np $np sharing the GPU" $? $W/preload$np.log
  grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/preload$np.log >> $T
done
cp $T $OUT/tests.txt
timeout 90 $B/mccl_unit_tests > $W/unit.log 2>&1
res "unit" $? $W/unit.log
gtests 2 "GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.PointToPoint*:GpuSingleProcess.*Graph*:GpuSingleProcess.SymmetricWindows*:GpuSingleProcess.AlltoAll*" 200
finish call1

#!/usr/bin/env bash
# Call 1 (one H200, main at e8eae04 and the LL all-to-all): the device API's ncclSymPtr, ncclCoopBcast
# and ncclLLA2ASession (DevApi.LlAllToAllAcrossKernelsAndTheEpochWrap, new)
# (DevApi.SymPtrAndCoopBcast, never run yet) and the rest of the device API tests on two
# processes sharing the GPU; the unit tests with a GPU; every single-process GPU test on 2
# ranks as threads sharing the GPU (the host-side changes of 2026-12-05: self Send/Recv
# pairs as copies, checkPeers' fast path, MCCL_LOG's level check, touch code the GPU path
# shares); the preload tests on two processes sharing it.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
MCCL_SHARED_GPU=2 timeout 150 $M -x MCCL_SHARED_GPU $B/mccl_gpu_devapi_tests > $W/devapi.log 2>&1
res "devapi np 2 sharing the GPU" $? $W/devapi.log
grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/devapi.log >> $T
MCCL_SHARED_GPU=2 timeout 100 ${M/-np 2/-np 3} -x MCCL_SHARED_GPU $B/mccl_gpu_devapi_tests \
  --gtest_filter='DevApi.LlAll*:DevApi.SymPtr*' > $W/devapi3.log 2>&1
res "devapi np 3 sharing the GPU" $? $W/devapi3.log
grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/devapi3.log >> $T
timeout 90 $B/mccl_unit_tests > $W/unit.log 2>&1
res "unit" $? $W/unit.log
gtests 2 "*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers" 330
MCCL_SHARED_GPU=2 timeout 100 $M -x MCCL_SHARED_GPU $B/mccl_preload_gpu_tests > $W/preload.log 2>&1
res "preload np 2 sharing the GPU" $? $W/preload.log
grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/preload.log >> $T
finish call1

#!/usr/bin/env bash
# Call 2: the preload tests again on 3 processes sharing the GPU, after call 1's failure
# of PreloadGpu.FortranCallsOnDeviceBuffersGoToMccl there (the test compared the tail no
# Alltoallv block covers when 3 does not divide the buffer: fixed in the test).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for np in 3 2; do
  MCCL_SHARED_GPU=2 timeout 60 ${M/-np 2/-np $np} -x MCCL_SHARED_GPU $B/mccl_preload_gpu_tests \
    --gtest_filter='PreloadGpu.Fortran*:PreloadGpu.VForms*' > $W/preload$np.log 2>&1
  res "preload np $np sharing the GPU" $? $W/preload$np.log
  grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/preload$np.log >> $T
done
finish call2

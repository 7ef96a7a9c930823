#!/usr/bin/env bash
# Call 1 (one H200, ranks sharing it as threads): ncclCommRevoke and ncclCommShrink with
# kernels waiting on an absent rank (the new GpuSingleProcess test), on two and three
# ranks, beside the timeout test it follows and the plain-direct tests as a control.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
F='GpuSingleProcess.RevokeAndShrinkStopKernelsWaitingOnAnAbsentRank:GpuSingleProcess.CallsQueuedBehindATimeoutStopWithIt'
gtests 2 "$F" 150
gtests 3 "$F" 200
finish call1

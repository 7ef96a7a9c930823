#!/usr/bin/env bash
# Call 6 (one H200, ranks sharing it): src/kernels split into folders a stage (plan,
# launch, work, primitives, protocols, collectives); the rebuilt library's GPU tests, one
# test of each kernel family and path, on two ranks as threads and two processes.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
F='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SymmetricWindowsEveryTypeOpAndForm:GpuSingleProcess.SymmetricWindowsCopyEngines:GpuSingleProcess.GraphCaptureReplayedThousandTimes:GpuSingleProcess.SimpleUnitsEveryCollectiveTypeAndForm:GpuSingleProcess.SelfSendRecvPairsAndBacklog:GpuSingleProcess.AlltoAllFamilyInGraphCapture:GpuSingleProcess.LeanAndGeneralLlKernelsAlternateOnOneCommunicator:GpuSingleProcess.Ll128TwoShotAllReduceEveryTypeOpAndForm:GpuSingleProcess.SimpleUnalignedBuffersEveryCollective:GpuSingleProcess.RevokeAndShrinkStopKernelsWaitingOnAnAbsentRank:GpuPlainDirect.*'
mpitests 'GpuMpi.PlainBuffersDirect:GpuMpi.SymmetricWindowCollectives' 120
gtests 2 "$F" 420
finish call6

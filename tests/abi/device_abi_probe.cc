// Prints the size and field offsets of the host-visible structs of nccl_device.h, one per
// line. Built once against mccl's include/ and once against NVIDIA's headers;
// check_device_header.sh compares the two outputs (the layouts a program and libmccl share).
#include <cstddef>
#include <cstdio>
// (after <cstddef>: NVIDIA's nccl_device/utility.h uses size_t without including it)
#include <nccl_device.h>

#define SZ(T) std::printf("sizeof %s %zu\n", #T, sizeof(T))
#define OFF(T, f) std::printf("offsetof %s.%s %zu\n", #T, #f, offsetof(T, f))

int main() {
  SZ(ncclTeam);
  OFF(ncclTeam, nRanks);
  OFF(ncclTeam, rank);
  OFF(ncclTeam, stride);
  SZ(ncclDevCommRequirements);
  OFF(ncclDevCommRequirements, resourceRequirementsList);
  OFF(ncclDevCommRequirements, teamRequirementsList);
  OFF(ncclDevCommRequirements, lsaMultimem);
  OFF(ncclDevCommRequirements, barrierCount);
  OFF(ncclDevCommRequirements, lsaBarrierCount);
  OFF(ncclDevCommRequirements, railGinBarrierCount);
  OFF(ncclDevCommRequirements, lsaLLA2ABlockCount);
  OFF(ncclDevCommRequirements, lsaLLA2ASlotCount);
  OFF(ncclDevCommRequirements, ginForceEnable);
  OFF(ncclDevCommRequirements, ginContextCount);
  OFF(ncclDevCommRequirements, ginSignalCount);
  OFF(ncclDevCommRequirements, ginCounterCount);
  SZ(ncclDevResourceRequirements);
  OFF(ncclDevResourceRequirements, next);
  OFF(ncclDevResourceRequirements, bufferSize);
  OFF(ncclDevResourceRequirements, bufferAlign);
  OFF(ncclDevResourceRequirements, outBufferHandle);
  OFF(ncclDevResourceRequirements, ginSignalCount);
  OFF(ncclDevResourceRequirements, ginCounterCount);
  OFF(ncclDevResourceRequirements, outGinSignalStart);
  OFF(ncclDevResourceRequirements, outGinCounterStart);
  SZ(ncclTeamRequirements);
  OFF(ncclTeamRequirements, next);
  OFF(ncclTeamRequirements, team);
  OFF(ncclTeamRequirements, multimem);
  OFF(ncclTeamRequirements, outMultimemHandle);
  SZ(ncclLsaBarrierHandle);
  OFF(ncclLsaBarrierHandle, bufHandle);
  OFF(ncclLsaBarrierHandle, nBarriers);
  SZ(ncclGinBarrierHandle);
  SZ(ncclLLA2AHandle);
  SZ(ncclMultimemHandle);
  SZ(ncclWindow_vidmem);
  SZ(ncclSymPtr<float>);
  OFF(ncclSymPtr<float>, window);
  OFF(ncclSymPtr<float>, offset);
  SZ(ncclDevCommWindowTable);
  SZ(ncclDevComm);
  OFF(ncclDevComm, rank);
  OFF(ncclDevComm, nRanks);
  OFF(ncclDevComm, nRanks_rcp32);
  OFF(ncclDevComm, lsaRank);
  OFF(ncclDevComm, lsaSize);
  OFF(ncclDevComm, lsaSize_rcp32);
  OFF(ncclDevComm, windowTable);
  OFF(ncclDevComm, resourceWindow);
  OFF(ncclDevComm, resourceWindow_inlined);
  OFF(ncclDevComm, lsaMultimem);
  OFF(ncclDevComm, lsaBarrier);
  OFF(ncclDevComm, railGinBarrier);
  OFF(ncclDevComm, ginContextCount);
  OFF(ncclDevComm, ginTypes);
  OFF(ncclDevComm, ginHandles);
  OFF(ncclDevComm, ginSignalBase);
  OFF(ncclDevComm, ginSignalCount);
  OFF(ncclDevComm, ginCounterBase);
  OFF(ncclDevComm, ginCounterCount);
  OFF(ncclDevComm, ginSignalShadows);
  std::printf("sizeof ncclDevResourceHandle %zu\n", sizeof(ncclDevResourceHandle_t));
  return 0;
}

/* mccl's nccl_device.h: the device API of NCCL 2.28 for the ranks of one node (LSA):
 * device communicators, teams, window pointers (and ncclSymPtr), LSA barriers (and the LSA
 * form of ncclBarrierSession), the LL all-to-all (ncclLLA2ASession), cooperative groups
 * (and ncclCoopBcast) and nccl::utility.
 * What is and is not supported: the README's "Device API" section. */
#ifndef MCCL_NCCL_DEVICE_H_
#define MCCL_NCCL_DEVICE_H_
#include "nccl_device/utility.h"
#include "nccl_device/coop.h"
#include "nccl_device/core.h"
#include "nccl_device/comm.h"
#include "nccl_device/lsa_barrier.h"
#include "nccl_device/barrier.h"
#include "nccl_device/ll_a2a.h"
#include "nccl_device/ptr.h"

/* Defined by libmccl for programs built against NCCL 2.28; it answers ncclInvalidUsage
 * (the GPU-initiated network is not provided). */
NCCL_EXTERN_C __host__ ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t, ncclTeam_t, int nBarriers,
                                                                    ncclGinBarrierHandle_t* outHandle,
                                                                    ncclDevResourceRequirements_t* outReq);
#endif

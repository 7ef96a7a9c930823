/* mccl's nccl_device/comm.h: the device communicator (declared in core.h). */
#ifndef _NCCL_DEVICE_COMM_H_
#define _NCCL_DEVICE_COMM_H_
#include "core.h"
#endif

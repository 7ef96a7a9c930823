// libmccl_fold_devices.so: runs a program written for N GPUs on a machine with fewer, by
// folding every CUDA device number it passes to the runtime onto the devices there are
// (device d becomes d % count). Preloaded (LD_PRELOAD) into an unchanged program, such as
// nccl-tests with -g 2 on a one-GPU machine, whose ranks are then threads of one process
// sharing a GPU: mccl runs them under MCCL_SHARED_GPU=1 (NVIDIA's NCCL refuses duplicate
// GPUs). A test tool for correctness on small machines; timings taken this way measure
// ranks sharing one GPU's SMs and memory, not NVLink.
//
// MCCL_FOLD_DEVICES=N makes cudaGetDeviceCount report at least N devices (programs check
// that the GPUs they ask for exist). Only that call and the runtime calls that take a
// device number are wrapped; the program must link the CUDA runtime dynamically
// (nccl-tests does: -lcudart).
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static cudaError_t (*realCount)(int*);

static int foldCount(void) {
  static int count = 0;
  if (count == 0) {
    int n = 0;
    if (!realCount) realCount = (cudaError_t(*)(int*))dlsym(RTLD_NEXT, "cudaGetDeviceCount");
    if (realCount && realCount(&n) == cudaSuccess && n > 0) count = n;
    else count = 1;
  }
  return count;
}

static int fold(int device) { return device < 0 ? device : device % foldCount(); }

static void* next(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "fold_devices: %s not found in the CUDA runtime\n", name);
    abort();
  }
  return f;
}

cudaError_t cudaGetDeviceCount(int* count) {
  if (!realCount) realCount = (cudaError_t(*)(int*))next("cudaGetDeviceCount");
  cudaError_t e = realCount(count);
  const char* want = getenv("MCCL_FOLD_DEVICES");
  if (e == cudaSuccess && want && atoi(want) > *count) *count = atoi(want);
  return e;
}

cudaError_t cudaSetDevice(int device) {
  static cudaError_t (*real)(int);
  if (!real) real = (cudaError_t(*)(int))next("cudaSetDevice");
  return real(fold(device));
}

cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device) {
  static cudaError_t (*real)(int*, enum cudaDeviceAttr, int);
  if (!real) real = (cudaError_t(*)(int*, enum cudaDeviceAttr, int))next("cudaDeviceGetAttribute");
  return real(value, attr, fold(device));
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* prop, int device) {
  static cudaError_t (*real)(struct cudaDeviceProp*, int);
  if (!real) real = (cudaError_t(*)(struct cudaDeviceProp*, int))next("cudaGetDeviceProperties");
  return real(prop, fold(device));
}

cudaError_t cudaDeviceGetPCIBusId(char* id, int len, int device) {
  static cudaError_t (*real)(char*, int, int);
  if (!real) real = (cudaError_t(*)(char*, int, int))next("cudaDeviceGetPCIBusId");
  return real(id, len, fold(device));
}

cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  static cudaError_t (*real)(int*, int, int);
  if (!real) real = (cudaError_t(*)(int*, int, int))next("cudaDeviceCanAccessPeer");
  return real(can, fold(device), fold(peer));
}

// A program written for NCCL, run on libmccl through NCCL's library names
// (build/nccl-home/lib/libnccl.so and libnccl.so.2, installed next to libmccl with
// MCCL_NCCL_ALIAS): linked with -lnccl against the alias (it then needs libmccl.so.0, the
// alias's soname), or against NVIDIA's libnccl.so.2 and run with the alias first on the
// library path. Either way its nccl* calls must land in libmccl.
#define _GNU_SOURCE  // dladdr
#include <dlfcn.h>
#include <stdio.h>

#include "nccl.h"

int main(void) {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess || version != NCCL_VERSION_CODE) {
    fprintf(stderr, "ncclGetVersion gave %d, this header says %d\n", version, NCCL_VERSION_CODE);
    return 1;
  }
  // Only libmccl defines mcclCommInitFromMpi; ncclGetVersion must come from the same object.
  void* mcclOnly = dlsym(RTLD_DEFAULT, "mcclCommInitFromMpi");
  Dl_info a, b;
  if (mcclOnly == NULL || !dladdr(mcclOnly, &a) || !dladdr((void*)&ncclGetVersion, &b) || a.dli_fbase != b.dli_fbase) {
    fprintf(stderr, "ncclGetVersion does not come from libmccl (%s)\n", mcclOnly ? b.dli_fname : "no libmccl loaded");
    return 1;
  }
  const char* e = ncclGetErrorString(ncclInvalidArgument);
  if (e == NULL || e[0] == '\0') return 1;
  printf("NCCL API %d served by %s\n", version, b.dli_fname);
  return 0;
}

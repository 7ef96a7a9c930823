// nccl-tests uses __half, __nv_bfloat16 and the fp8 types after including only nccl.h, as
// NVIDIA's header brings them in. This must compile against mccl's header alone.
#include <nccl.h>

__half h;
__nv_bfloat16 b;
#if CUDART_VERSION >= 11080
__nv_fp8_e4m3 f8a;
__nv_fp8_e5m2 f8b;
#endif
cudaStream_t s;

int main() { return 0; }

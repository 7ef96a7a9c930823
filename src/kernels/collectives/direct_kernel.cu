// The direct kernels: collectives read and written in place in the peers' symmetric windows
// or plain buffers, each block with the same block of every peer (kernels/work/direct.h says
// what each collective reads and writes). One kernel per
// arithmetic type (every operator), and one for data movement only; a translation unit of
// its own, so it builds in parallel with the others. What both kinds of work run is in
// direct_common.cuh, what only plain buffers need in direct_plain.cuh.
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "kernels/collectives/direct_common.cuh"
#include "kernels/launch/direct_launch.h"
#include "kernels/collectives/direct_plain.cuh"
#include "kernels/launch/driver_launch.h"
#include "kernels/primitives/grid_dep.cuh"
#include "kernels/launch/launch.h"
#include "nccl.h"

namespace mccl {
namespace {

// Block ch runs its share of every work that uses ch, each between an entry and an exit
// barrier. Its flag count lives in this rank's own slot of its barrier array (only this
// rank writes it), so eager launches and graph replays go on from where the last left.
// Works on plain buffers bring their own barriers (plainEntry, plainExit); a launch of only
// such works has no barrier arrays (DirectArgs::flags null).
template <int MW, typename S>
__global__ void __launch_bounds__(kMaxThreads, 1) directKernel(const __grid_constant__ DirectArgs<MW> a) {
  __shared__ uint64_t epoch;
  __shared__ PlainShared plain;
  __shared__ DirectProf prof;
  const int ch = blockIdx.x;
  const bool profiled = kDirectProfile && a.comm.prof != nullptr && threadIdx.x == 0;  // MCCL_PROFILE
  if (profiled) {
    for (unsigned long long& v : prof.sum) v = 0;
    directMark(prof, -1);
  }
  gridDepWait();  // the parameters only, before: nothing the last kernel wrote (grid_dep.cuh)
  if (threadIdx.x == 0 && a.flags[a.rank]) epoch = ldVolatile(a.flags[a.rank] + ch * kDirectMaxRanks + a.rank);
  if (threadIdx.x == 0) plain.stop = 0;  // a stopped block leaves: 0 for every work after
  __syncthreads();
  uint64_t e = epoch;
  if (profiled) directMark(prof, kProfDirectStart);
  for (int wi = 0; wi < a.nworks; ++wi) {
    const DirectWork& w = a.works[wi];
    if (ch >= w.nchannels) continue;
    if (profiled) {
      prof.sum[kProfDirectWorks - kProfDirectWorks] += 1;
      prof.sum[kProfDirectPlain - kProfDirectWorks] += w.plain;
    }
    // Every work runs from its copy in shared memory (a plain one's with the peers' places
    // its entry brought): one call site of the loops for both kinds, which build once. The
    // alternatives cost the windows' path (one shared H200, bench/results/gpu-1xH200-
    // 2026-12-03): a reference to either the parameters or shared memory made every load of
    // the work a generic one (1-1.7 us a call slower), the places held in registers spilled
    // (0.6-1.2 us), two call sites took the build twice as long and were 0.1-0.5 us slower
    // at 1-2 MiB, 3.6 us at 8 MiB. From shared memory the windows' path is as fast as
    // main's (from the parameters) at 512 KiB - 2 MiB, and its reductions 1.1-1.45x faster
    // at 4-8 MiB (call 6).
    // The work into shared memory here, where its loads are the parameters' own (inside the
    // entry, through a generic reference to them, thread 0's copy took 1.8 us: bench/results/
    // gpu-1xH200-2026-12-03b call 3).
    if (threadIdx.x == 0) {
      plain.w = w;
      plain.mineNull = 0;
    }
    if (w.plain) {
      __syncthreads();
      if (!plainEntry(a.comm, a.rank, a.nranks, ch, plain, kDirectProfile && a.comm.prof ? prof.stamp : nullptr))
        return;
      if (profiled) directMarkEntry(prof);
    } else {
      if (!barrier(a, ch, ++e, false)) return;  // its __syncthreads_or publishes the copy
    }
    if (profiled && !w.plain) directMark(prof, kProfDirectEntry);
    if (!w.plain || !plain.staged) {
      runWork<S>(a, plain.w, ch);
    } else if (w.coll == static_cast<uint8_t>(Coll::AllGather)) {
      plainGatherStaged(a.rank, a.nranks, ch, plain);
    } else if constexpr (!std::is_same<S, NoArith>::value) {
      plainReduceStaged<S>(a.comm, a.rank, a.nranks, ch, plain);
    }
    if (kDirectProfile && a.comm.prof) {  // the same in every thread
      __syncthreads();
      if (profiled) directMark(prof, kProfDirectRun);
    }
    if (w.plain) {
      if (!plainExit(a.comm, a.rank, a.nranks, ch, plain)) return;
    } else {
      __syncthreads();
      if (!barrier(a, ch, ++e, true)) return;
    }
    if (profiled) directMark(prof, kProfDirectExit);
  }
  if (profiled) directFlush(prof, a.comm.prof);
}

template <int MW>
using DirectKernelFn = void (*)(DirectArgs<MW>);

template <int MW>
DirectKernelFn<MW> directKernelFor(bool reduces, int type) {
  if (!reduces) return directKernel<MW, NoArith>;
  return withType(type, [](auto t) -> DirectKernelFn<MW> { return directKernel<MW, typename decltype(t)::type>; });
}

template <int MW>
size_t stackMax() {
  size_t most = 0;
  cudaFuncAttributes attr;
  for (int t = -1; t < ncclNumTypes; ++t)
    if (cudaFuncGetAttributes(&attr, directKernelFor<MW>(t >= 0, t)) == cudaSuccess && attr.localSizeBytes > most)
      most = attr.localSizeBytes;
  return most;
}

}  // namespace

size_t directKernelStackBytesMax() {
  const size_t most = std::max(stackMax<kDirectSmallLaunch>(), stackMax<kDirectLaunch>());
  cudaGetLastError();
  return most;
}

ncclResult_t launchDirectKernel(const DirectLaunch& l, const void* args, cudaStream_t stream, const char** error) {
  // Through the driver where it can (kernels/launch/driver_launch.h): each kernel's CUfunction is
  // looked up once a device, [small][type, or ncclNumTypes for data movement].
  static DriverFunctions functions[2][ncclNumTypes + 1];
  static GridDepDevices gridDep;  // the direct kernels wait for the previous grid (PDL)
  const void* fn = l.small ? reinterpret_cast<const void*>(directKernelFor<kDirectSmallLaunch>(l.reduces, l.type))
                           : reinterpret_cast<const void*>(directKernelFor<kDirectLaunch>(l.reduces, l.type));
  const CUresult cr = driverLaunch(fn, &functions[l.small ? 0 : 1][l.reduces ? l.type : ncclNumTypes],
                                   static_cast<unsigned>(l.blocks), static_cast<unsigned>(l.threads), args, stream,
                                   &gridDep);
  if (cr == CUDA_SUCCESS) return ncclSuccess;
  if (cr != CUDA_ERROR_NOT_SUPPORTED) {
    *error = driverCalls().describe(cr);
    return ncclUnhandledCudaError;
  }
  const dim3 grid(l.blocks), block(l.threads);
  if (l.small)
    directKernelFor<kDirectSmallLaunch>(l.reduces, l.type)<<<grid, block, 0, stream>>>(
        *static_cast<const DirectArgs<kDirectSmallLaunch>*>(args));
  else
    directKernelFor<kDirectLaunch>(l.reduces, l.type)<<<grid, block, 0, stream>>>(
        *static_cast<const DirectArgs<kDirectLaunch>*>(args));
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    *error = cudaGetErrorString(e);
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

}  // namespace mccl

// The one table of every environment variable mccl reads.
//
// Each row: id, variable, type, default, one line of help. Nothing else in the tree calls
// getenv: code asks for a knob's parsed value here. Values are read once, on first use;
// knobsReload() reads the environment again (tests use it after setenv).
#pragma once

#include <cstdint>
#include <string>

namespace mccl {

enum class KnobType { Int, Size, Bool, String };

// X(id, name, type, default, help)
#define MCCL_KNOB_TABLE(X)                                                                     \
  X(Debug, "NCCL_DEBUG", String, "", "log level: VERSION, WARN, INFO, ABORT or TRACE")         \
  X(DebugSubsys, "NCCL_DEBUG_SUBSYS", String, "INIT,BOOTSTRAP,ENV",                             \
    "subsystems logged at INFO: INIT,COLL,P2P,SHM,NET,GRAPH,TUNING,ENV,ALLOC,CALL,PROXY,"      \
    "BOOTSTRAP,REG,ALL; a leading ^ excludes")                                                 \
  X(DebugFile, "NCCL_DEBUG_FILE", String, "", "log to this file (%h host, %p pid) instead of stdout") \
  X(Algo, "NCCL_ALGO", String, "", "algorithms allowed: ring, tree, oneshot (host shared memory) (comma list, ^ excludes)")  \
  X(Proto, "NCCL_PROTO", String, "", "protocols allowed: LL, LL128, Simple (comma list, ^ excludes)") \
  X(BuffSize, "NCCL_BUFFSIZE", Size, "4194304", "bytes of each connection's FIFO")             \
  X(NThreads, "NCCL_NTHREADS", Int, "0", "CUDA threads per channel block (0: automatic)")      \
  X(MinNChannels, "NCCL_MIN_NCHANNELS", Int, "0", "fewest channels a plan uses (0: automatic)") \
  X(MaxNChannels, "NCCL_MAX_NCHANNELS", Int, "0", "most channels a plan uses (0: automatic)")  \
  X(P2pDisable, "NCCL_P2P_DISABLE", Bool, "0", "never use CUDA IPC between GPUs")             \
  X(P2pNvlChunkSize, "NCCL_P2P_NVL_CHUNKSIZE", Size, "524288",                                 \
    "GPU: the slot of a point-to-point connection's FIFO over CUDA IPC, on two ranks or wherever set (NCCL_BUFFSIZE / this many slots, 2 to 28; elsewhere the collectives' FIFO)") \
  X(ShmDisable, "NCCL_SHM_DISABLE", Bool, "0", "never map peers' host memory directly")        \
  X(CommBlocking, "NCCL_COMM_BLOCKING", Int, "-1",                                               \
    "1: blocking communicators, 0: nonblocking, -1: as the config says")                       \
  X(CtaPolicy, "NCCL_CTA_POLICY", Int, "-1",                                                   \
    "0 default, 1 efficiency, 2 zero (copy engines where they can do the work); -1: as the config says") \
  X(CheckPointers, "NCCL_CHECK_POINTERS", Bool, "0", "check that buffers are usable from the device") \
  X(SocketIfname, "NCCL_SOCKET_IFNAME", String, "",                                             \
    "interfaces for the TCP bootstrap (prefix list, ^ excludes, = exact)")                     \
  X(CommId, "NCCL_COMM_ID", String, "", "host:port the unique-id root listens on")             \
  X(NvlsEnable, "NCCL_NVLS_ENABLE", Int, "0", "NVLink multicast: mccl never uses it")          \
  X(LocalRegister, "NCCL_LOCAL_REGISTER", Bool, "1", "honour ncclCommRegister (0: ignore)")    \
  X(Device, "MCCL_DEVICE", String, "auto", "auto, host, or a CUDA device number")              \
  X(Timeout, "MCCL_TIMEOUT", Int, "30", "seconds before a wait for a peer fails (RemoteError)") \
  X(BootstrapTimeout, "MCCL_BOOTSTRAP_TIMEOUT", Int, "0", "seconds a bootstrap wait may take (0: MCCL_TIMEOUT)") \
  X(WarnAfter, "MCCL_WARN_AFTER", Int, "10", "seconds a wait runs before it is logged at WARN") \
  X(DumpSchedule, "MCCL_DUMP_SCHEDULE", Bool, "0", "print every schedule a plan builds")       \
  X(DumpSignal, "MCCL_DUMP_SIGNAL", Bool, "0", "SIGUSR2 dumps the state of every communicator") \
  X(DriverLaunch, "MCCL_DRIVER_LAUNCH", Bool, "1",                                              \
    "GPU communicators: launch kernels and record events through the driver API (0: the runtime's calls)") \
  X(PlanCache, "MCCL_PLAN_CACHE", Bool, "1",                                                    \
    "GPU communicators: a lone operation, or a group on this communicator alone, that repeats one of the last 8 plans reuses it") \
  X(LaunchGraphBytes, "MCCL_LAUNCH_GRAPH_BYTES", Size, "65536",                                  \
    "GPU communicators: a plan of the cache (MCCL_PLAN_CACHE) whose launch is one small LL kernel without programmatic dependent launch (MCCL_PDL off, ranks sharing a GPU, GPUs before sm_90), moving at most this many bytes an operation, replays a CUDA graph of that kernel from its third eager launch alike on the same stream (0: never)") \
  X(Pdl, "MCCL_PDL", Int, "1",                                                                   \
    "GPU communicators: LL-family, Simple and symmetric-window launches start behind the previous kernel on their stream and wait for it on the device (programmatic dependent launch, sm_90; 0 never, 1 not with MCCL_SHARED_GPU, 2 with it too: a benchmark's choice on one GPU, whose every rank's two launches must fit on the GPU at once)") \
  X(UserBuffers, "MCCL_USER_BUFFERS", Int, "2",                                                  \
    "GPU communicators on one node: Simple AllGather, AllReduce, AlltoAll and Send/Recv both ways (Broadcast and one-way Send/Recv under MCCL_USER_BUFFERS_MIN_BYTES) write straight into the receiver's output where its sender's process maps it (0 never, 1 ncclCommRegister'ed outputs only, 2 also any cudaMalloc'ed output from its second use, or its first inside a graph capture; peers close their mappings of a freed buffer within about 100 ms)") \
  X(UserBuffersMinBytes, "MCCL_USER_BUFFERS_MIN_BYTES", Int, "0",                                \
    "0: the user-buffer path where it measured faster (AllGather from 6 MiB a rank, AllReduce from MCCL_USER_BUFFERS_ALLREDUCE_BYTES, AlltoAll from MCCL_USER_BUFFERS_ALLTOALL_BYTES, Send/Recv both ways from MCCL_USER_BUFFERS_SENDRECV_BYTES); else the smallest operation (bytes a rank sends; AllReduce: the vector) of AllGather, AllReduce, Broadcast and Send/Recv that takes it") \
  X(UserBuffersAllReduceBytes, "MCCL_USER_BUFFERS_ALLREDUCE_BYTES", Int, "10485760",              \
    "The smallest ring AllReduce (bytes of the vector) whose final data takes the user-buffer path when MCCL_USER_BUFFERS_MIN_BYTES is 0") \
  X(UserBuffersAlltoAllBytes, "MCCL_USER_BUFFERS_ALLTOALL_BYTES", Int, "8388608",                \
    "The smallest block (bytes a rank sends a peer) of an AlltoAll whose Sends write straight into the peers' outputs when MCCL_USER_BUFFERS_MIN_BYTES is 0 (0: never)") \
  X(UserBuffersSendRecvBytes, "MCCL_USER_BUFFERS_SENDRECV_BYTES", Int, "8388608",               \
    "The smallest Send/Recv (bytes) that writes straight into the receiver's output when MCCL_USER_BUFFERS_MIN_BYTES is 0, where the group also receives from that peer (both ways at once; 0: never)") \
  X(SimpleKernel, "MCCL_SIMPLE_KERNEL", Bool, "1",                                              \
    "GPU communicators: Simple ring, chain and point-to-point launches run in kernels of their own (0: the generic kernel)") \
  X(SimpleUnits, "MCCL_SIMPLE_UNITS", Bool, "1",                                                \
    "GPU communicators: channels of a large Simple ring or chain collective take its units as they free up (0: a fixed range each)") \
  X(SimplePostWarp, "MCCL_SIMPLE_POST_WARP", Bool, "1",                                          \
    "GPU communicators: in the Simple kernel a work that sends keeps its last warp out of the data, to fence and post each step while the others move the next (0: every thread moves, one of them posts)") \
  X(P2pBlockBothWays, "MCCL_P2P_BLOCK_BOTH_WAYS", Bool, "1",                                    \
    "GPU communicators: in the Simple kernel a peer's Sends and Recvs on one channel share a block, half of its threads each way, on up to 32 channels (NCCL's blocks; 0: a block a direction, up to 24 channels; every rank the same)") \
  X(P2pDirectRecvThreads, "MCCL_P2P_DIRECT_RECV_THREADS", Int, "64",                           \
    "GPU communicators: in a block that serves a peer both ways, the threads of the Recv half where every Recv's data arrives in the output straight from the peer (the user-buffer path), a multiple of 32; the Sends take the rest (0: half the block)") \
  X(Profile, "MCCL_PROFILE", Bool, "0",                                                          \
    "GPU communicators: time the host phases of each launch and the phases of each kernel step (the direct kernels' phases and the lean LL kernel's block start in parts only in a build by scripts/kernel-profile.sh), averages printed at destroy; and libmccl_mpi's blocking calls of one collective (route, launch or graph launch, wait), printed at exit") \
  X(ProfileInit, "MCCL_PROFILE_INIT", Bool, "0",                                                  \
    "print the phases of every init, split and destroy (one line per rank on stderr)")          \
  X(HostId, "MCCL_HOST_ID", String, "", "overrides the host identity (tests make fake nodes)") \
  X(InitByNodeMinRanks, "MCCL_INIT_BY_NODE_MIN_RANKS", Int, "64",                                 \
    "MPI-backed communicators of at least this many ranks exchange init records within nodes only (equal on every rank)") \
  X(Transport, "MCCL_TRANSPORT", String, "auto", "host peers: auto, ucx or loopback")          \
  X(UcxDirect, "MCCL_UCX_DIRECT", Bool, "1", "map peers' FIFOs directly when UCX allows it")   \
  X(UcxKeepalive, "UCX_KEEPALIVE_INTERVAL", String, "",                                         \
    "UCX's own; when unset mccl turns UCX keepalive off (idle ranks are not failures)")        \
  X(HostChannels, "MCCL_HOST_NCHANNELS", Int, "0", "channels of host plans (0: automatic)")     \
  X(GpuFence, "MCCL_GPU_FENCE", String, "acqrel", "kernel flag fence: acqrel, or sc (tests)")  \
  X(GpuSlices, "MCCL_GPU_SLICES", Int, "1", "flags per GPU FIFO slot (1 is fastest measured)")     \
  X(ConnTable, "MCCL_CONN_TABLE", String, "auto",                                               \
    "GPU connection table: sparse (memory only behind connected peers' blocks), full (every peer's, one allocation), auto (sparse when the table is larger than a page)") \
  X(NetChannels, "MCCL_NET_NCHANNELS", Int, "4", "channels of a GPU plan with network peers")       \
  X(FifoSlots, "MCCL_FIFO_SLOTS", Int, "0",                                                      \
    "pipeline slots of each connection's FIFO (0: 8 on host memory, 4 on GPUs: 1 MiB posts; GPU point-to-point over CUDA IPC: NCCL_P2P_NVL_CHUNKSIZE)")  \
  X(LlMaxBytes, "MCCL_LL_MAX_BYTES", Size, "0",                                                 \
    "GPU: the LL protocol below this many bytes sent per rank (0: the tuner decides)")         \
  X(Ll128MaxBytes, "MCCL_LL128_MAX_BYTES", Size, "0",                                           \
    "GPU: the LL128 protocol below this many bytes sent per rank (0: the tuner decides)")      \
  X(Ll128TwoShot, "MCCL_LL128_TWO_SHOT", Int, "1",                                              \
    "GPU: LL128 AllReduce in two hops (ReduceScatter, then AllGather of each rank's block): 1 where measured faster (four ranks or more, from 1 MiB), 2 on any LL128 AllReduce of more than two ranks, 0 never") \
  X(WinDirect, "MCCL_WIN_DIRECT", Int, "1",                                                     \
    "GPU: collectives on symmetric windows read and write peers' windows in place: 1 at the sizes where that was measured faster than the FIFOs, 2 at every size, 0 never") \
  X(WinDirectMinBytes, "MCCL_WIN_DIRECT_MIN_BYTES", Size, "0",                                  \
    "GPU: the smallest collective (bytes per rank) that takes the direct path on symmetric windows") \
  X(WinOneShotMaxBytes, "MCCL_WIN_ONESHOT_MAX_BYTES", Size, "262144",                           \
    "GPU: the largest out-of-place AllReduce on windows that every rank reduces whole beyond 2 ranks (above: two-shot)") \
  X(WinCeMinBytes, "MCCL_WIN_CE_MIN_BYTES", Size, "33554432",                                  \
    "GPU: AllGather and Broadcast on symmetric windows of at least this many bytes per rank, and AlltoAll blocks of at least this many bytes whose outputs are symmetric windows, are moved by the copy engines (0: only under NCCL_CTA_POLICY_ZERO)") \
  X(CeSync, "MCCL_CE_SYNC", Int, "1",                                                           \
    "GPU: the barriers around copy-engine collectives on symmetric windows as stream memory operations on words in host memory, with no block waiting (1), or a kernel of one block (0); a CUDA graph capture always takes the kernel") \
  X(P2pCeMinBytes, "MCCL_P2P_CE_MIN_BYTES", Size, "0",                                         \
    "GPU: a user's Send/Recv of at least this many bytes with a peer of this node moves on the copy engines (no SM), the two hosts meeting in shared memory without waiting for each other (0: never)") \
  X(PlainCeMinBytes, "MCCL_PLAIN_CE_MIN_BYTES", Size, "0",                                     \
    "GPU communicators of one node, one GPU a process: AllGather, Broadcast (2 ranks), AlltoAll, Gather and Scatter on buffers that are no symmetric window move on the copy engines (no SM) from this many bytes a rank (an AlltoAll's, Gather's or Scatter's block), each pair's hosts meeting in shared memory as a user's Send/Recv on the copy engines does (0: only under NCCL_CTA_POLICY_ZERO, from the sizes the windows take it there)") \
  X(PlainDirect, "MCCL_PLAIN_DIRECT", Int, "1",                                                 \
    "GPU communicators of one node: AllReduce, ReduceScatter and AllGather on buffers that are no window read and write the peers' buffers in place, their addresses exchanged in the kernel (a buffer a peer does not map yet, or that CUDA IPC cannot share, goes through the LL FIFOs instead): 1 at the sizes where that measured faster, when NCCL_PROTO and NCCL_ALGO are unset, 2 at every size, 3 at every size with every part through the FIFOs (tests), 0 never") \
  X(TreeThreshold, "MCCL_TREE_THRESHOLD", Size, "0",                                            \
    "AllReduce below this many bytes uses the tree (0: the model decides)")                    \
  X(MpiThreshold, "MCCL_MPI_THRESHOLD", Size, "1048576",                                        \
    "libmccl_mpi: device buffers of at least this many bytes go to mccl")                      \
  X(MpiGraphBytes, "MCCL_MPI_GRAPH_BYTES", Size, "65536",                                      \
    "libmccl_mpi: a blocking MPI_Allreduce, Reduce, Bcast, Allgather or Reduce_scatter_block of at most this many bytes that mccl runs on device buffers, made again with the same buffers and arguments, replays a CUDA graph of its kernel captured at its second call (0: never)") \
  X(HostMpiMaxBytes, "MCCL_HOST_MPI_MAX_BYTES", Size, "256",                                   \
    "host communicators made from an MPI_Comm: collectives of at most this many bytes (the larger buffer) run on MPI's own (0: never)") \
  X(HostShmMaxBytes, "MCCL_HOST_SHM_MAX_BYTES", Size, "65536",                                   \
    "host communicators on one node: collectives where one rank writes at most this many bytes, and Send/Recv of at most this many bytes, run in shared memory (0: never)") \
  X(HostShmStream, "MCCL_HOST_SHM_STREAM", String, "auto",                                       \
    "host communicators on one node: write data of at least MCCL_HOST_SHM_STREAM_BYTES into the shared-memory slots with streaming stores, which do not fetch each line from the core that read it last: 1 always, 0 never, auto where this rank's ordinary copies into them are measured slower than 5 GB/s (its readers' cores share no cache with it), never where the node's ranks outnumber its cores") \
  X(HostShmStreamBytes, "MCCL_HOST_SHM_STREAM_BYTES", Size, "4096",                             \
    "host communicators on one node: the smallest contribution or message that MCCL_HOST_SHM_STREAM applies to (0: none)") \
  X(IdleYield, "MCCL_IDLE_YIELD", String, "auto",                                               \
    "host waits: yield the core after a few empty polls (1), only after long waits (0), or auto: 1 where the node's ranks outnumber its CPUs") \
  X(OmpiOversubscribe, "OMPI_MCA_mpi_oversubscribe", String, "",                                \
    "Open MPI's own (set by mpirun): whether this node holds more ranks than slots (MCCL_IDLE_YIELD=auto follows it)") \
  X(OmpiLocalSize, "OMPI_COMM_WORLD_LOCAL_SIZE", Int, "0",                                      \
    "Open MPI's own (set by mpirun): the job's ranks on this node (MCCL_IDLE_YIELD=auto)")        \
  X(MpichLocalSize, "MPI_LOCALNRANKS", Int, "0",                                                \
    "MPICH's own (set by Hydra): the job's ranks on this node (MCCL_IDLE_YIELD=auto)")           \
  X(MpiVerbose, "MCCL_MPI_VERBOSE", Bool, "0", "libmccl_mpi: log the path of every call")        \
  X(MpiCudaAware, "MCCL_MPI_CUDA_AWARE", Bool, "1",                                              \
    "libmccl_mpi: MPIX_Query_cuda_support reports 1 (its collectives take device buffers)")      \
  X(MpiNonblocking, "MCCL_MPI_NONBLOCKING", Bool, "1",                                          \
    "libmccl_mpi: the nonblocking collectives (MPI_Iallreduce ... MPI_Iscatter) on device buffers go to mccl as the blocking ones do, their requests completed by MPI's progress (0: to MPI where it takes device buffers; on one that does not, mccl runs them to their end inside the call and hands out a completed request)") \
  X(SharedGpu, "MCCL_SHARED_GPU", Int, "0",                                                     \
    "1: ranks of one process may share a GPU (tests and benchmarks on one-GPU machines); "       \
    "2: ranks of different processes too (their kernels time-slice: correctness runs only)")  \
  X(SimpleUnitSteps, "MCCL_SIMPLE_UNIT_STEPS", Int, "0",                                         \
    "GPU communicators: units a channel of a large Simple ring or chain collective (or two-rank Send/Recv) aims at, its steps shrinking below a FIFO slot down to 256 KiB (0: the measured choice, 16 for a two-rank chain, 4 elsewhere, and two ranks' Sends and Recvs step 128 KiB from 32 MiB)") \
  X(SelfCopyEngineBytes, "MCCL_SELF_COPY_ENGINE_BYTES", Size, "8388608",                            \
    "GPU communicators: a rank's copy to itself (its own block of an AlltoAll, a Gather's or Scatter's root, its Sends to itself paired with its Recvs) of at least this many bytes is moved by the copy engines beside the kernel, on no SM (0: always in the kernel)")  \
  X(LlMaxChannels, "MCCL_LL_MAX_CHANNELS", Int, "24",                                           \
    "GPU communicators: most channels (blocks) of an LL or LL128 collective, 1-32 (NCCL's own LL and LL128 collectives take at most 24 on 2 x H200; the SMs are the user's)") \
  X(LlLeanLines, "MCCL_LL_LEAN_LINES", Int, "0",                                                 \
    "GPU communicators: most 8-byte lines a thread of the lean LL kernel (one step per channel) moves before a launch goes to the general LL kernel (0: the measured choice; 1 keeps the one-line form only)") \
  X(LlChannelBytes, "MCCL_LL_CHANNEL_BYTES", Size, "4096",                                      \
    "GPU communicators: bytes of each peer's data an LL collective gives a channel before it takes another (up to MCCL_LL_MAX_CHANNELS)")

enum class Knob : int {
#define MCCL_KNOB_ENUM(id, name, type, def, help) id,
  MCCL_KNOB_TABLE(MCCL_KNOB_ENUM)
#undef MCCL_KNOB_ENUM
      Count
};

struct KnobDef {
  const char* name;
  KnobType type;
  const char* defaultValue;
  const char* help;
};

const KnobDef& knobDef(Knob k);

// Parsed values. Int/Size/Bool knobs: knobInt. String knobs: knobStr. A value that does
// not parse is reported once at WARN and the default is used.
int64_t knobInt(Knob k);
bool knobBool(Knob k);
std::string knobStr(Knob k);
// A String knob of auto, 0 or 1 (MCCL_IDLE_YIELD, MCCL_HOST_SHM_STREAM): true with *value
// where it is 0 or 1 (or another boolean spelling); false for auto, and, with a warning,
// for anything else.
bool knobForced(Knob k, bool* value);
bool knobIsSet(Knob k);  // the variable is present in the environment

void knobsReload();
// Counts knobsReload() calls: what was decided from knobs before a change is stale after it
// (the GPU data path's plan cache keys its plans on it).
uint64_t knobsGeneration();
std::string knobsHelp();  // the table, one knob per line

// Parsers, exposed for unit tests and fuzzing. They accept surrounding blanks, reject
// trailing garbage and overflow, and never read past the terminating NUL.
bool parseKnobInt(const char* s, int64_t* out);
bool parseKnobSize(const char* s, int64_t* out);  // 4194304, 4M, 512K, 1G, 0x10
bool parseKnobBool(const char* s, bool* out);     // 1/0, true/false, yes/no, on/off

// Evaluates a filter list such as "ring,tree" or "^tree" (case-insensitive) for item.
bool knobListAllows(const std::string& list, const char* item);

}  // namespace mccl

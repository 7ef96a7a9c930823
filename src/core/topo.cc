#include "core/topo.h"

#include <hwloc.h>
#include <sched.h>

#include <cstdio>
#include <mutex>

#include "core/comm.h"
#include "core/debug.h"

namespace mccl {
namespace {

struct Topo {
  std::mutex mu;
  hwloc_topology_t topo = nullptr;
  bool loaded = false;
};

Topo& topo() {
  static Topo* t = new Topo();
  return *t;
}

// Loads the topology once (I/O devices included, so GPUs can be found by bus id).
hwloc_topology_t loaded() {
  Topo& t = topo();
  std::lock_guard<std::mutex> lock(t.mu);
  if (!t.loaded) {
    t.loaded = true;
    if (hwloc_topology_init(&t.topo) == 0) {
      hwloc_topology_set_io_types_filter(t.topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
      if (hwloc_topology_load(t.topo) != 0) {
        hwloc_topology_destroy(t.topo);
        t.topo = nullptr;
      }
    } else {
      t.topo = nullptr;
    }
  }
  return t.topo;
}

// The cpuset of the non-I/O ancestor of the GPU, or nullptr.
hwloc_const_cpuset_t gpuCpuset(hwloc_topology_t tp, const char* busId) {
  if (!busId || !*busId) return nullptr;
  hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(tp, busId);
  if (!pci) return nullptr;
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(tp, pci);
  return anc ? anc->cpuset : nullptr;
}

int numaOf(hwloc_topology_t tp, hwloc_const_cpuset_t set) {
  int n = hwloc_get_nbobjs_by_type(tp, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(tp, HWLOC_OBJ_NUMANODE, i);
    if (node && hwloc_bitmap_intersects(node->cpuset, set)) return static_cast<int>(node->os_index);
  }
  return -1;
}

}  // namespace

int currentNumaNode() {
  // The kernel knows the node of the CPU this thread runs on; loading hwloc's topology
  // for it cost a host rank's first init tens of ms.
  unsigned cpu = 0, numa = 0;
  if (::getcpu(&cpu, &numa) == 0) return static_cast<int>(numa);
  hwloc_topology_t tp = loaded();
  if (!tp) return -1;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  int node = -1;
  if (hwloc_get_last_cpu_location(tp, set, HWLOC_CPUBIND_THREAD) == 0) node = numaOf(tp, set);
  hwloc_bitmap_free(set);
  return node;
}

std::string describeLocality(const char* busId) {
  hwloc_topology_t tp = loaded();
  if (!tp) return "topology unknown";
  hwloc_bitmap_t own = nullptr;
  hwloc_const_cpuset_t set = gpuCpuset(tp, busId);
  if (!set) {
    own = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(tp, own, HWLOC_CPUBIND_PROCESS) != 0)
      hwloc_bitmap_copy(own, hwloc_topology_get_topology_cpuset(tp));
    set = own;
  }
  char* str = nullptr;
  hwloc_bitmap_asprintf(&str, set);
  char out[512];
  std::snprintf(out, sizeof out, "numa %d cpuset %s", numaOf(tp, set), str ? str : "?");
  free(str);
  if (own) hwloc_bitmap_free(own);
  return out;
}

void bindThreadNear(const char* busId) {
  hwloc_topology_t tp = loaded();
  if (!tp) return;
  hwloc_const_cpuset_t set = gpuCpuset(tp, busId);
  if (set) hwloc_set_cpubind(tp, set, HWLOC_CPUBIND_THREAD);
}

void logTopology(const ncclComm* comm) {
  if (!logEnabled(LogLevel::Info, kLogInit)) return;
  const std::string busId = busIdString(comm->topo.me().busId);
  if (comm->isHost())
    INFO(kLogInit, "rank %d: host communicator, %s", comm->rank, describeLocality(nullptr).c_str());
  else
    INFO(kLogInit, "rank %d: cudaDev %d busId %s, %s", comm->rank, comm->cudaDev, busId.c_str(),
         describeLocality(busId.c_str()).c_str());
}

}  // namespace mccl

# Throwaway: adds rdtsc stamps to a copy of the tree (argument: its root) for stamps.cc:
# mcclProf[0] the segment's group loop entered, [1] the Send's message published, [2] the
# Recv's message seen, [4] ncclGroupEnd calling runGroupAlone, [5] empty polls, [6]/[7]
# groups that waited 16/256 empty polls or more. Never built into the library itself.
import sys
root=sys.argv[1]
p=root+'/src/host_engine/shm_p2p.cc'
s=open(p).read()
s=s.replace('namespace mccl {\n','extern "C" __attribute__((visibility("default"))) unsigned long long mcclProf[8] = {};\nnamespace mccl {\n',1)
s=s.replace('      c->seq.store(s, std::memory_order_release);\n    } else {','      c->seq.store(s, std::memory_order_release);\n      mcclProf[1] = __builtin_ia32_rdtsc();\n    } else {',1)
s=s.replace('    if (c->seq.load(std::memory_order_acquire) != s) return ncclSuccess;\n','    if (c->seq.load(std::memory_order_acquire) != s) { ++mcclProf[5]; return ncclSuccess; }\n    mcclProf[2] = __builtin_ia32_rdtsc();\n',1)
s=s.replace('ncclResult_t ShmColls::runP2pGroup(const std::vector<OpDesc>& ops, const std::atomic<bool>& aborted) {\n','ncclResult_t ShmColls::runP2pGroup(const std::vector<OpDesc>& ops, const std::atomic<bool>& aborted) {\n  mcclProf[0] = __builtin_ia32_rdtsc();\n',1)
s=s.replace('''  size_t left = ops.size();
  LoneWait wait(comm_, aborted, mpiComm_);''','''  size_t left = ops.size();
  unsigned long long empties = 0;
  LoneWait wait(comm_, aborted, mpiComm_);''')
s=s.replace('''      if (--left == 0) return ncclSuccess;''','''      if (--left == 0) { if (empties >= 16) ++mcclProf[6]; if (empties >= 256) ++mcclProf[7]; return ncclSuccess; }''')
s=s.replace('''    MCCL_CHECK(wait.idle([&] {
      for''','''    ++empties;
    MCCL_CHECK(wait.idle([&] {
      for''')
open(p,'w').write(s)
p=root+'/src/core/group.cc'
s=open(p).read()
s=s.replace('      lists.ran = c->dataPath->runGroupAlone(','      mcclProf[4] = __builtin_ia32_rdtsc();\n      lists.ran = c->dataPath->runGroupAlone(',1)
s=s.replace('namespace mccl {\nnamespace {','extern "C" unsigned long long mcclProf[8];\nnamespace mccl {\nnamespace {',1)
open(p,'w').write(s)
print(open(root+'/src/host_engine/shm_p2p.cc').read().count('mcclProf'), open(root+'/src/core/group.cc').read().count('mcclProf'))

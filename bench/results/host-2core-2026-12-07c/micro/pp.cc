// Ping-pong of one message between two processes pinned to cpus 0 and 1: ways to move it.
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <immintrin.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <algorithm>
#include <vector>

struct alignas(128) Flag { std::atomic<uint64_t> v; };
struct Shared {
  Flag seq[2];      // message number written to rank r
  Flag posted[2];   // rank r posted its recv for message k
  Flag addr[2];     // rank r's recv buffer address
  Flag ack[2];
  Flag pid[2];
  alignas(4096) char slot[2][1 << 17];
};
static void pin(int c) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(c, &s); sched_setaffinity(0, sizeof s, &s); }
static void ntcopy(char* d, const char* s, size_t n) {
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m128i a = _mm_loadu_si128((const __m128i*)(s + i)), b = _mm_loadu_si128((const __m128i*)(s + i + 16)),
            c = _mm_loadu_si128((const __m128i*)(s + i + 32)), e = _mm_loadu_si128((const __m128i*)(s + i + 48));
    _mm_stream_si128((__m128i*)(d + i), a); _mm_stream_si128((__m128i*)(d + i + 16), b);
    _mm_stream_si128((__m128i*)(d + i + 32), c); _mm_stream_si128((__m128i*)(d + i + 48), e);
  }
  _mm_sfence();
  if (i < n) memcpy(d + i, s + i, n - i);
}
int main(int argc, char** argv) {
  int iters = 1000;
  Shared* sh = (Shared*)mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  memset(sh, 0, sizeof *sh);
  size_t sizes[] = {8, 4096, 8192, 16384, 32768, 65536};
  const char* names[] = {"slot", "slot_nt", "writev", "readv", "slot8", "slot8_nt"};
  int me = fork() == 0 ? 1 : 0;
  pin(me);
  sh->pid[me].v.store(getpid());
  while (!sh->pid[1 - me].v.load()) {}
  pid_t peer = sh->pid[1 - me].v.load();
  char* sbuf = (char*)aligned_alloc(4096, 1 << 17);
  char* rbuf = (char*)aligned_alloc(4096, 1 << 17);
  memset(sbuf, me + 1, 1 << 17); memset(rbuf, 0, 1 << 17);
  uint64_t k = 0;  // message counter (both sides count the same)
  for (int rep = 0; rep < 1; ++rep)
  for (int way = 0; way < 6; ++way)
    for (size_t bytes : sizes) {
      std::vector<double> t, cin;
      for (int it = 0; it < iters; ++it) {
        auto t0 = std::chrono::steady_clock::now();
        for (int leg = 0; leg < 2; ++leg) {
          ++k;
          int sender = leg;  // leg 0: 0 -> 1, leg 1: 1 -> 0
          int to = 1 - sender;
          if (me == sender) {
            if (way == 2) {  // write into the receiver's posted buffer
              while (sh->posted[to].v.load(std::memory_order_acquire) != k) {}
              iovec l{sbuf, bytes}, r{(void*)sh->addr[to].v.load(), bytes};
              if (process_vm_writev(peer, &l, 1, &r, 1, 0) != (ssize_t)bytes) { perror("writev"); exit(1); }
              sh->seq[to].v.store(k, std::memory_order_release);
            } else if (way == 3) {  // publish address; receiver reads; wait for ack
              sh->addr[to].v.store((uint64_t)sbuf);
              sh->seq[to].v.store(k, std::memory_order_release);
              while (sh->ack[me].v.load(std::memory_order_acquire) != k) {}
            } else {
              char* slot = sh->slot[to];
              auto c0 = std::chrono::steady_clock::now();
              size_t pieces = way >= 4 ? 8 : 1;
              size_t pb = (bytes + pieces - 1) / pieces;
              for (size_t at = 0; at < bytes; at += pb) {
                size_t len = std::min(pb, bytes - at);
                if (way == 1 || way == 5) ntcopy(slot + at, sbuf + at, len); else memcpy(slot + at, sbuf + at, len);
                if (pieces > 1) sh->ack[to].v.store(k * 1000000 + at + len, std::memory_order_release);
              }
              sh->seq[to].v.store(k, std::memory_order_release);
              cin.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - c0).count() / bytes);
            }
          } else {
            if (way == 2) { sh->addr[me].v.store((uint64_t)rbuf); sh->posted[me].v.store(k, std::memory_order_release); }
            if (way < 4) while (sh->seq[me].v.load(std::memory_order_acquire) != k) {}
            if (way == 3) {
              iovec l{rbuf, bytes}, r{(void*)sh->addr[me].v.load(), bytes};
              if (process_vm_readv(peer, &l, 1, &r, 1, 0) != (ssize_t)bytes) { perror("readv"); exit(1); }
              sh->ack[sender].v.store(k, std::memory_order_release);
            } else if (way >= 4) {
              size_t pb = (bytes + 7) / 8;
              for (size_t at = 0; at < bytes; at += pb) {
                size_t len = std::min(pb, bytes - at);
                while (sh->ack[me].v.load(std::memory_order_acquire) < k * 1000000 + at + len) {}
                memcpy(rbuf + at, sh->slot[me] + at, len);
              }
            } else if (way != 2) {
              memcpy(rbuf, sh->slot[me], bytes);
            }
          }
        }
        auto t1 = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 2);
      }
      if (me == 0) {
        std::sort(t.begin(), t.end());
        std::sort(cin.begin(), cin.end());
        printf("%d %-8s %6zu  median %7.2f us  p10 %7.2f  copyin %.3f ns/B\n", rep, names[way], bytes, t[t.size() / 2], t[t.size() / 10], cin.empty() ? 0.0 : cin[cin.size() / 2]);
        fflush(stdout);
      }
    }
  if (me == 0) wait(nullptr);
}

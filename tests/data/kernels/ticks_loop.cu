// A loop whose iterations change memory (Dat3M's infix/suffix repetition case): block 0 counts
// its rounds in ticks[0] with atomicAdd until block 1, which watches the count, raises the flag.
// Each iteration writes a new value that another thread reads, so no iteration repeats the
// last one unchanged: the stuck test does not decide such a loop, and the liveness verdict is
// "not decided" (docs/liveness.md) — never "terminates" from an unrolling that cut it.
// ptxmm: launch k<<<2, 1>>>(unsigned ticks[1], int flag[1])
// ptxmm: expect ok
// ptxmm: exists flag[0] == 1
#include <cuda/atomic>

__global__ void k(unsigned *ticks, int *flag) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[0]);
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(ticks[0]);
  if (blockIdx.x == 0) {
    do {
      t.fetch_add(1, cuda::memory_order_relaxed);
    } while (f.load(cuda::memory_order_relaxed) == 0);
  } else {
    while (t.load(cuda::memory_order_relaxed) < 2) {
    }
    f.store(1, cuda::memory_order_relaxed);
  }
}

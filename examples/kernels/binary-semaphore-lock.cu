// cuda::binary_semaphore as a lock around a counter: each block spins on try_acquire(), increments
// the counter with plain accesses, and release()s.
// ptxmm: launch locked_increment<<<2, 1>>>(int sem[1] = {1}, int count[1], int done[2])
// ptxmm: expect ok
// ptxmm: forall count[0] == 2
// Why ok (PTX ISA, Memory Consistency Model): try_acquire is atom.exch.acquire.gpu of 0 on the
// semaphore, succeeding when it read 1; release() is st.release.gpu of 1. The atoms and the release
// store of one location are totally ordered in coherence, and an atom reads the write just before it:
// the second block's successful exchange reads the first block's release store (the only other write
// of 1), so release and acquire synchronize and the first block's counter store is in causality
// order before the second block's counter load: no race, the count is 2. Liveness is "not decided":
// the retry loop writes the semaphore (a failed exchange still writes 0), which the stuck test does
// not repeat exactly (docs/liveness.md, Limits). acquire() itself (libcu++'s wait in a retry loop)
// is no longer refused for its paths, but its check takes minutes.
#include <cassert>
#include <cuda/semaphore>

__global__ void locked_increment(cuda::binary_semaphore<cuda::thread_scope_device> *sem, int *count,
                                 int *done) {
  while (!sem->try_acquire()) {
  }
  int c = count[0] + 1;
  count[0] = c;
  sem->release();
  assert(c == 1 || c == 2);
  done[blockIdx.x] = 1;
}

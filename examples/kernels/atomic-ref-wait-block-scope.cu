// atomic-ref-wait with the wrong scope: the flag is a cuda::atomic_ref<int, thread_scope_block>, but
// the waiter is another block.
// ptxmm: launch waiter<<<2, 1>>>(int data[1], int flag[1], int out[1])
// ptxmm: expect race, assert-fails, hang
// ptxmm: exists out[0] == 0
// Why (PTX ISA, Memory Consistency Model; docs/liveness.md): the store is st.release.cta and the polls
// ld.acquire.cta; threads of two CTAs are not in each other's .cta scope, so the pair is not
// morally strong: no synchronization, the plain data store and load race and the load may read 0
// (the assertion fails). And the .cta polls are not bound to ever see the other CTA's store
// (scoped memory fairness): the wait may go round forever, a hang. The back-off (spin count,
// %globaltimer) decides nothing about the exit, so the repeated iteration is a real one.
#include <cassert>
#include <cuda/atomic>

__global__ void waiter(int *data, int *flag, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_block> f(flag[0]);
  if (blockIdx.x == 0) {
    data[0] = 42;
    f.store(1, cuda::memory_order_release);
    f.notify_all();
  } else {
    f.wait(0, cuda::memory_order_acquire);
    int d = data[0];
    assert(d == 42);
    out[0] = d;
  }
}

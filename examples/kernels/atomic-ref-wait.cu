// libcu++'s blocking wait: block 0 publishes data and stores the flag with release, then notifies;
// block 1 waits with cuda::atomic_ref::wait(0, acquire) and reads the data.
// ptxmm: launch waiter<<<2, 1>>>(int data[1], int flag[1], int out[1])
// ptxmm: expect ok
// ptxmm: forall out[0] == 42
// Why ok (PTX ISA, Memory Consistency Model): wait compiles to a poll loop of ld.acquire.gpu on the
// flag (sixteen unrolled polls, then a loop that sleeps with nanosleep for a delay picked from a spin
// count and %globaltimer); it returns only after a poll read a value other than 0, i.e. the
// st.release.gpu of 1. That release and acquire pattern is morally strong (both .gpu, one GPU), so
// the data store is in causality order before the data load: no race, out[0] is 42. Liveness: the
// spin count and the elapsed time only pick the back-off (no branch they reach decides whether the
// loop exits: docs/liveness.md), the loops only read, and the acquire load is bound to see the
// release store eventually (memory fairness): no execution hangs.
#include <cassert>
#include <cuda/atomic>

__global__ void waiter(int *data, int *flag, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[0]);
  if (blockIdx.x == 0) {
    data[0] = 42;
    f.store(1, cuda::memory_order_release);
    f.notify_all();
  } else {
    f.wait(0, cuda::memory_order_acquire);
    assert(data[0] == 42);
    out[0] = data[0];
  }
}

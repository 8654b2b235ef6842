// atomic-ref-wait with a natural mistake: the wait is memory_order_relaxed, and the data is read
// right after it returns.
// ptxmm: launch waiter<<<2, 1>>>(int data[1], int flag[1], int out[1])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[0] == 0
// Why a race (PTX ISA, Memory Consistency Model): the polls are ld.relaxed.gpu; a relaxed read of the
// released flag is no acquire pattern (and no fence.acquire follows it), so nothing puts block 0's
// plain data store in causality order before block 1's plain data load: they conflict and are not
// ordered, a data race, and the load may read the initial 0: the assertion fails. The wait still ends (the relaxed
// polls are morally strong with the release store and bound to see it): no hang.
#include <cassert>
#include <cuda/atomic>

__global__ void waiter(int *data, int *flag, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[0]);
  if (blockIdx.x == 0) {
    data[0] = 42;
    f.store(1, cuda::memory_order_release);
    f.notify_all();
  } else {
    f.wait(0, cuda::memory_order_relaxed);
    int d = data[0];
    assert(d == 42);
    out[0] = d;
  }
}

// Message passing with a release store of the flag and an acquire load: the data store
// happens before the data load, there is no race and the assertion holds.
// ptxmm: launch mp<<<2, 1>>>(int data[1], int flag[1], int out[1])
// ptxmm: expect ok
// ptxmm: forall out[0] == 42
#include <cassert>
#include <cuda/atomic>

__global__ void mp(int *data, int *flag, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[0]);
  if (blockIdx.x == 0) {
    data[0] = 42;
    f.store(1, cuda::memory_order_release);
  } else {
    while (f.load(cuda::memory_order_acquire) != 1) {
    }
    int d = data[0];
    out[0] = d;
    assert(d == 42);
  }
}

// A flag wait with an exponential back-off, the shape of libcu++'s
// __libcpp_thread_poll_with_backoff / cuda::std::atomic::wait on the device: spin on an acquire
// load, sleeping a delay that doubles up to a cap. Block 0 publishes data and releases the flag.
// ptxmm: launch waiter<<<2, 1>>>(int data[1], int flag[1], int out[1])
// ptxmm: expect ok
// ptxmm: forall out[0] == 42
// Why it terminates (docs/liveness.md): the delay `ns` only feeds __nanosleep and its own update,
// and nothing reads it after the loop, so a longer wait ends like one the unrolling explored.
#include <cassert>
#include <cuda/atomic>

__global__ void waiter(int *data, int *flag, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[0]);
  if (blockIdx.x == 0) {
    data[0] = 42;
    f.store(1, cuda::memory_order_release);
  } else {
    unsigned ns = 8;
    while (f.load(cuda::memory_order_acquire) == 0) {
      __nanosleep(ns);
      if (ns < 256) ns *= 2;
    }
    assert(data[0] == 42);
    out[0] = data[0];
  }
}

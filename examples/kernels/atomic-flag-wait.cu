// cuda::std::atomic_flag as a one-shot event: block 0 publishes data and sets the flag with
// release, block 1 waits for it with atomic_flag::wait(false, acquire).
// ptxmm: launch waiter<<<2, 1>>>(int data[1], int flag[1], int out[1])
// ptxmm: expect ok
// ptxmm: forall out[0] == 42
// Why ok (PTX ISA, Memory Consistency Model): test_and_set(release) is an atom.exch.release.gpu of 1;
// wait(false) polls with ld.acquire.gpu until it reads true, which only that atom wrote, so release
// and acquire synchronize (morally strong, .gpu): the data store is in causality order before the
// data load. Liveness: the back-off decides nothing about the exit, the acquire polls are bound to see
// the atom's write: no execution hangs.
#include <cassert>
#include <cuda/std/atomic>

__global__ void waiter(int *data, cuda::std::atomic_flag *flag, int *out) {
  if (blockIdx.x == 0) {
    data[0] = 42;
    flag->test_and_set(cuda::std::memory_order_release);
    flag->notify_all();
  } else {
    flag->wait(false, cuda::std::memory_order_acquire);
    assert(data[0] == 42);
    out[0] = data[0];
  }
}

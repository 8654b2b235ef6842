// Message passing between two blocks with a relaxed flag: block 0 writes data, then sets the flag
// with a relaxed store; block 1 spins on the flag (relaxed) and reads data with a plain load.
// A relaxed store is not a release, so nothing orders the data store before the flag store for
// block 1: the plain accesses to data race and the assertion can fail.
// ptxmm: launch mp<<<2, 1>>>(int data[1], int flag[1])
// ptxmm: expect race, assert-fails
#include <cassert>
#include <cuda/atomic>

__global__ void mp(int *data, int *flag) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[0]);
  if (blockIdx.x == 0) {
    data[0] = 42;
    f.store(1, cuda::memory_order_relaxed);
  } else {
    while (f.load(cuda::memory_order_relaxed) != 1) {
    }
    assert(data[0] == 42);
  }
}

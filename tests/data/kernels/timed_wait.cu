// A timed wait: block 1 polls a flag with __nanosleep back-off and gives up after a deadline read
// from %globaltimer (a timeout, as DeepEP's and libcu++'s timed waits have). Block 0 publishes
// data and releases the flag. Whether the flag was seen decides whether out[0] is read.
// ptxmm: launch timed<<<2, 1>>>(int data[1], int flag[1], int out[1])
// ptxmm: expect ok
// Liveness: the loop's exit depends on the timer (a timeout), so it is not a hang; ptxmm answers
// "not decided" for such a loop (semantics/loops.py `timed`), never a hang.
#include <cassert>
#include <cuda/atomic>

// libcu++ reads the timer so (cuda/std/__cuda/chrono.h); nvcc 13 declares no device function
// for it
__device__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void timed(int *data, int *flag, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[0]);
  if (blockIdx.x == 0) {
    data[0] = 42;
    f.store(1, cuda::memory_order_release);
  } else {
    unsigned long long t0 = globaltimer();
    int seen = 0;
    while (!(seen = f.load(cuda::memory_order_acquire))) {
      __nanosleep(100);
      if (globaltimer() - t0 > 1000000) break;
    }
    if (seen) {
      assert(data[0] == 42);
      out[0] = data[0];
    }
  }
}

// cuda::barrier across a block: four threads each write their slot of shared memory, meet at
// bar.arrive_and_wait(), and read their neighbour's slot.
// ptxmm: launch exchange<<<1, 4>>>(int out[4])
// ptxmm: expect ok
// ptxmm: forall out[0] == 2 && out[1] == 3 && out[2] == 4 && out[3] == 1
// Why ok (PTX ISA, mbarrier; Memory Consistency Model): thread 0 initializes the mbarrier with the
// block's 4 threads before __syncthreads(); arrive_and_wait is mbarrier.arrive (release, .cta) and a
// loop of mbarrier.try_wait (acquire, .cta) on the returned state, which completes only once all four
// arrived in that phase. Each slot store is before its thread's arrive, each read after the wait
// that saw the phase complete: release and acquire through the mbarrier order every store before
// every read. Liveness: the back-off (spin count, %globaltimer) decides nothing about the exit; all
// four threads arrive, so the phase completes: no execution hangs.
#include <cassert>
#include <cuda/barrier>
#pragma nv_diag_suppress static_var_with_dynamic_init

__global__ void exchange(int *out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int slot[4];
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  slot[threadIdx.x] = threadIdx.x + 1;
  bar.arrive_and_wait();
  int v = slot[(threadIdx.x + 1) % blockDim.x];
  assert(v == (threadIdx.x + 1) % blockDim.x + 1);
  out[threadIdx.x] = v;
}

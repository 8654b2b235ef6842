// cuda-samples' simpleAWBarrier: a block reduction that shuffles within thread_block_tile<32>
// tiles, publishes each tile's sum to shared memory, and separates the publish from the final
// tile's reads with a libcu++ cuda::barrier<thread_scope_block> (arrive / wait on a token).
// Source: github:NVIDIA/cuda-samples (commit c94ff366),
//   Samples/0_Introduction/simpleAWBarrier/simpleAWBarrier.cu: reduceBlockData and the kernel's
//   barrier set-up (quoted: `__shared__ cuda::barrier<cuda::thread_scope_block> barrier;
//   if (threadIdx.x == 0) { init(&barrier, blockDim.x); } cg::sync(cta);` and
//   `auto token = barrier.arrive(); barrier.wait(std::move(token));`).
// Cut: int instead of double, tiles of 2 threads instead of 32 (a 4-thread block has two tiles:
// tiled_partition<2>; 8 arrivals on one mbarrier take ptxmm minutes today), the dot product
// (thread t's value is t + 1), the grid-wide parts (this is
// the block step only: normVecByDotProductAWBarrier's reduceBlockData<false> on one block).
//
// ptxmm: launch reduce<<<1, 4>>>(int result[1])
// ptxmm: expect ok
// ptxmm: forall result[0] == 10
//
// Why no race (PTX ISA 8.9; libcu++ cuda::barrier): each tile leader's weak st.shared of tmp[tile]
// precedes its barrier.arrive() (for thread_scope_block libcu++ lowers it to mbarrier.arrive on
// sm_80+: release.cta), and every thread's barrier.wait(token) returns only once the phase
// completed (mbarrier.test_wait/try_wait: acquire.cta), so the arrive synchronizes with the wait
// and the store is before tile 0's weak ld.shared. init() is separated from the first arrive by
// cg::sync(cta) (bar.sync). Shuffles move registers only.
// Why the assertion holds: 1 + 2 + 3 + 4 = 10. The wait ends: all 4 threads arrive once.
#include <cassert>
#include <cooperative_groups.h>
#include <cuda/barrier>

namespace cg = cooperative_groups;

__device__ void reduceBlockData(cuda::barrier<cuda::thread_scope_block> &barrier,
                                cg::thread_block_tile<2> &tile32, int &threadSum, int *result)
{
    __shared__ int tmp[2];

#pragma unroll
    for (int offset = tile32.size() / 2; offset > 0; offset /= 2) {
        threadSum += tile32.shfl_down(threadSum, offset);
    }
    if (tile32.thread_rank() == 0) {
        tmp[tile32.meta_group_rank()] = threadSum;
    }

    auto token = barrier.arrive();

    barrier.wait(std::move(token));

    // The warp 0 will perform last round of reduction
    if (tile32.meta_group_rank() == 0) {
        int beta = tile32.thread_rank() < tile32.meta_group_size() ? tmp[tile32.thread_rank()] : 0;

#pragma unroll
        for (int offset = tile32.size() / 2; offset > 0; offset /= 2) {
            beta += tile32.shfl_down(beta, offset);
        }

        if (tile32.thread_rank() == 0) {
            *result = beta;
            assert(beta == 10);
        }
    }
}

__global__ void reduce(int *result)
{
#pragma nv_diag_suppress static_var_with_dynamic_init
    cg::thread_block cta = cg::this_thread_block();
    cg::thread_block_tile<2> tile32 = cg::tiled_partition<2>(cta);

    __shared__ cuda::barrier<cuda::thread_scope_block> barrier;

    if (threadIdx.x == 0) {
        init(&barrier, blockDim.x);
    }

    cg::sync(cta);

    int threadSum = threadIdx.x + 1;
    reduceBlockData(barrier, tile32, threadSum, result);
}

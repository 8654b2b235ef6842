// A block-wide sum as CUB's BlockReduce computes it with the BLOCK_REDUCE_WARP_REDUCTIONS
// algorithm: a shuffle reduction within each warp of 32 lanes, lane 0 of each warp publishing its
// warp's aggregate to shared memory, __syncthreads(), and thread 0 adding the aggregates. Correct.
// Source: github:NVIDIA/cccl, cub/cub/block/specializations/block_reduce_warp_reductions.cuh
//   (BlockReduceWarpReductions::Sum and ApplyWarpAggregates: "if (lane_id == 0) ... warp_aggregates
//   + warp_id ...; CTA_SYNC(); if (linear_tid == 0) ... warp_aggregates[SUCCESSOR_WARP]") and
//   cub/cub/warp/specializations/warp_reduce_shfl.cuh (ReduceStep: SHFL_DOWN_SYNC with offsets
//   16, 8, 4, 2, 1 over the full warp mask).
// Cut: int instead of a template T, the shuffle as __shfl_down_sync rather than CUB's inline asm
// (both are shfl.sync.down.b32 with the full mask), the successor warps added by a loop over
// blockDim.x / 32 instead of CUB's compile-time recursion, thread t's input is t + 1, one result
// per block.
//
// ptxmm: launch block_sum<<<2, 64>>>(int out[2])
// ptxmm: expect ok
// ptxmm: forall out[0] == 2080 && out[1] == 2080
//
// Why no race (PTX ISA 9.7.12.8 shfl.sync; 9.7.13.1 bar.sync; memory consistency model,
// "Synchronizes-with"): the shuffles move registers between the lanes of one warp and touch no
// memory. The only shared-memory accesses are lane 0's weak st.shared of warp_aggregates[w] (one
// per warp, distinct elements) and thread 0's weak ld.shared of warp_aggregates[1 ..]; they
// conflict only across the bar.sync, whose arrivals synchronize with every participant's wait on
// the same barrier instance, so each store precedes thread 0's loads in causality order. The global
// store out[blockIdx.x] is one per block.
// Why the assertion holds: the five shfl.sync.down steps leave in lane 0 the sum of its warp's 32
// inputs (lanes past the warp read their own value, but only lane 0's result is used, and it only
// ever reads lanes 1..31 through offsets that stay within the warp); thread 0 adds the other warps'
// aggregates, each the value its store wrote (coherence: the store is the only write of the element
// and precedes the load): 1 + 2 + ... + 64 = 2080 for a block of 64 threads.
// Litmus twin: none.
#include <cassert>

__global__ void block_sum(int *out)
{
    __shared__ int warp_aggregates[32];
    const int t = threadIdx.x;
    const int lane = t % 32;
    const int warp = t / 32;
    int v = t + 1;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if (lane == 0) {
        warp_aggregates[warp] = v;
    }
    __syncthreads();
    if (t == 0) {
        for (int w = 1; w < blockDim.x / 32; ++w) {
            v += warp_aggregates[w];
        }
        out[blockIdx.x] = v;
        const int n = blockDim.x;
        assert(v == n * (n + 1) / 2);
    }
}

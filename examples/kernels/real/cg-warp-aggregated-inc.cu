// cuda-samples' warp-aggregated atomic increment: the coalesced group's leader does one atomicAdd
// for the whole group and broadcasts the old value with a shuffle; each thread takes its slot.
// Source: github:NVIDIA/cuda-samples (commit c94ff366),
//   Samples/3_CUDA_Features/warpAggregatedAtomicsCG/warpAggregatedAtomicsCG.cu: atomicAggInc and
//   filter_arr (quoted: `cg::coalesced_group active = cg::coalesced_threads(); int res = 0;
//   if (active.thread_rank() == 0) { res = atomicAdd(counter, active.size()); }
//   res = active.shfl(res, 0); return res + active.thread_rank();` and
//   `if (src[i] > 0) dst[atomicAggInc(nres)] = src[i];`).
// Cut: one block of 4 threads, 4 elements (every thread runs its loop body once).
//
// ptxmm: launch filter_arr<<<1, 4>>>(int dst[4], int nres[1], int src[4] = {5, 0, 7, 9}, 4)
// ptxmm: expect ok
// ptxmm: forall nres[0] == 3 && dst[3] == 0
//
// Why no race (PTX ISA 8.7; shfl.sync): nres is only touched by one atomicAdd (atom, strong).
// Each thread of the coalesced group gets old + its rank in the group: distinct slots, so the weak
// stores to dst[] never conflict. The shuffle moves a register value (no memory access).
// Why the condition holds: three positive inputs take slots 0, 1, 2 (in some order), dst[3] stays
// 0; the assert checks each thread's slot is in range.
#include <cassert>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__device__ int atomicAggInc(int *counter)
{
    cg::coalesced_group active = cg::coalesced_threads();
    // leader does the update
    int res = 0;
    if (active.thread_rank() == 0) {
        res = atomicAdd(counter, active.size());
    }
    // broadcast result
    res = active.shfl(res, 0);
    // each thread computes its own value
    return res + active.thread_rank();
}

__global__ void filter_arr(int *dst, int *nres, const int *src, int n)
{
    int id = threadIdx.x + blockIdx.x * blockDim.x;
    for (int i = id; i < n; i += gridDim.x * blockDim.x) {
        if (src[i] > 0) {
            int slot = atomicAggInc(nres);
            assert(slot >= 0 && slot < 3);
            dst[slot] = src[i];
        }
    }
}

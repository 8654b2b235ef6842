// cuda-samples' single-pass multi-block reduction with a cooperative-groups grid barrier: each
// block reduces in shared memory (cg::reduce over a thread_block_tile<32>, then thread 0), writes
// its partial, cg::sync(grid), and grid thread 0 adds the partials.
// Source: github:NVIDIA/cuda-samples (commit c94ff366),
//   Samples/2_Concepts_and_Techniques/reductionMultiBlockCG/reductionMultiBlockCG.cu:
//   reduceBlock (sdata[tid] = cg::reduce(tile32, sdata[tid], cg::plus<double>()); cg::sync(cta); ...)
//   and reduceSinglePassMultiBlockCG (quoted: `if (block.thread_rank() == 0) { g_odata[blockIdx.x]
//   = sdata[0]; } cg::sync(grid); if (grid.thread_rank() == 0) { for (int block = 1; block <
//   gridDim.x; block++) { g_odata[0] += g_odata[block]; } }`); cg::sync(grid) itself is the CUDA
//   toolkit's cooperative_groups/details/sync.h (grid barrier word reached through %envreg).
// Cut: int data instead of float/double (the sum stays exact), 2 blocks of 2 threads, so the
// tile32 of the source spans the 2-thread block (cg::reduce over the block's lanes), the sample's
// host code; the launch must be cooperative (cudaLaunchCooperativeKernel) for grid.sync().
//
// ptxmm: launch cooperative reduceSinglePassMultiBlockCG<<<2, 2>>>(int g_idata[4] = {1, 2, 3, 4}, int g_odata[2], 4)
// ptxmm: expect ok
// ptxmm: forall g_odata[0] == 10
//
// Why no race (PTX ISA 8.9): grid.sync() is, in the CUDA 13.0 toolkit's
// cooperative_groups/details/sync.h (sync_grids_arrive / sync_grids_wait, sm_70+ branch):
// __barrier_sync(0); the CTA master does `atom.add.release.gpu.u32` on the grid's barrier word
// (block 0 adds 0x80000000 - (expected - 1), the others 1, so the top bit flips when all arrived);
// it polls with `ld.acquire.gpu.u32` until the bit flipped; __barrier_sync(0). Block 1's weak store
// of g_odata[1] -> bar.sync -> its master's release RMW -> (block 0's acquire load reads the last RMW of the
// word; an atom reading a write extends observation order, 8.9.2) -> bar.sync -> grid
// thread 0's weak load of g_odata[1]: causality order, both sides .gpu and morally strong.
// The shared-memory accesses are separated by cg::sync(cta) (bar.sync). g_odata[0] is read and
// written by grid thread 0 only after the barrier, and written before it by the same thread.
// Why the assertion holds: 1 + 2 + 3 + 4 = 10. The barrier completes: every block arrives once.
#include <cassert>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

__device__ void reduceBlock(int *sdata, const cg::thread_block &cta)
{
    const unsigned int tid = cta.thread_rank();
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);

    sdata[tid] = cg::reduce(tile32, sdata[tid], cg::plus<int>());
    cg::sync(cta);

    int beta = 0;
    if (cta.thread_rank() == 0) {
        beta = 0;
        for (int i = 0; i < blockDim.x; i += tile32.size()) {
            beta += sdata[i];
        }
        sdata[0] = beta;
    }
    cg::sync(cta);
}

__global__ void reduceSinglePassMultiBlockCG(const int *g_idata, int *g_odata, unsigned int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    __shared__ int sdata[2];

    sdata[block.thread_rank()] = 0;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) {
        sdata[block.thread_rank()] += g_idata[i];
    }
    cg::sync(block);

    reduceBlock(sdata, block);
    if (block.thread_rank() == 0) {
        g_odata[blockIdx.x] = sdata[0];
    }
    cg::sync(grid);

    if (grid.thread_rank() == 0) {
        for (int block = 1; block < gridDim.x; block++) {
            g_odata[0] += g_odata[block];
        }
        assert(g_odata[0] == 10);
    }
}

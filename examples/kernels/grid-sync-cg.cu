// Cooperative groups' grid barrier, cg::this_grid().sync(), used once by two blocks to exchange a
// value. Correct under a cooperative launch; launched without one, grid.sync() traps.
//
// ptxmm: launch cooperative exchange<<<2, 1>>>(int slot[2], int out[2])
// ptxmm: expect ok
// ptxmm: forall out[0] == 2 && out[1] == 1
//
// The barrier is CUDA's own (CUDA 13.0 toolkit, include/cooperative_groups.h and
// cooperative_groups/details/: it is not part of the CCCL repository, whose cudax keeps its own copy
// of the algorithm in cuda/experimental/__group/synchronizer/level_synchronizer.cuh). nvcc inlines:
//  * this_grid() (driver_abi.h, get_grid_workspace): the driver's grid workspace pointer, read from
//    %envreg1 (high half) and %envreg2 (low half) — `struct grid_workspace { unsigned wsSize;
//    unsigned barrier; }`;
//  * grid_group::sync() (cooperative_groups.h): `if (!is_valid()) _CG_ABORT();` — a null workspace
//    is a `trap` — then details::sync_grids_arrive / sync_grids_wait (details/sync.h): __syncthreads();
//    thread 0 of each block does `atom.add.release.gpu` on `barrier` (block 0 adds
//    0x80000000 - (gridDim - 1), the others 1, so the last arrival flips bit 31) and spins on
//    `ld.acquire.gpu` of `barrier` until bit 31 differs from what its own add returned;
//    __syncthreads().
// `ptxmm: launch cooperative ...` is cudaLaunchCooperativeKernel: ptxmm gives the workspace a hidden
// zero-initialised global buffer (__grid_workspace[2]) whose address both blocks read from the
// envregs, so the code above is checked as written. The same launch without `cooperative` reads a
// null workspace (as a process that has made no cooperative launch does: seen on an H200) and
// reports the `trap` of grid.sync() (tests/kernel/test_cooperative.py).
//
// Why no race and why the assertion holds (PTX ISA memory model), with one thread a block (the
// __syncthreads() are trivial):
//  * Block b's weak store slot[b] precedes, in program order, its atom.add.release.gpu on barrier:
//    a release operation.
//  * The other block's ld.acquire.gpu that ends its spin reads barrier's final value, written by the
//    last of the two adds; the first add is read by the last (an atom reads the value before it), so
//    each block's release add is in the release sequence read by the other's exiting acquire load
//    (observation order through the RMW chain). Device scope, same gpu: morally strong, so they
//    synchronize, and each slot store happens before the other block's slot load.
//  * So no weak pair is unordered, and coherence gives each load the neighbour's value.
// The spins end in every fair execution: the second add flips bit 31, and both spins wait for it.
#include <cassert>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void exchange(int *slot, int *out)
{
    const int b = blockIdx.x;
    const int n = gridDim.x;
    slot[b] = b + 1;
    cg::this_grid().sync();
    int v = slot[(b + 1) % n];
    out[b] = v;
    assert(v == (b + 1) % n + 1);
}

// CUB's GridBarrier (cub/grid/grid_barrier.cuh, removed from today's CCCL): a software grid barrier
// with one flag word per block — every block fences and reports in with a volatile store; block 0
// waits for all flags with ThreadLoad<LOAD_CG> and releases the others by storing 0; the others
// spin on their own flag with ThreadLoad<LOAD_CG>.
// Source: github NVIDIA/cub, cub/grid/grid_barrier.cuh (commit 1115e291): GridBarrier::Sync
//   (as written below; that version spells the load `Load<LOAD_CG>(d_sync + peer_block)`);
//   cub/thread/thread_load.cuh: the LOAD_CG load of an unsigned int is
//   asm volatile("ld.cg.u32 %0, [%1];" : "=r"(retval) : "l"(ptr)) (the _CUB_LOAD_4 macro).
// Cut: 2 blocks of 1 thread; around one Sync() each block publishes one word before it and reads
// the other block's word after it (a kernel using the barrier between two sweeps).
//
// ptxmm: launch sweep<<<2, 1>>>(unsigned d_sync[2], int slot[2], int out[2])
// ptxmm: expect race, assert-fails, hang
// ptxmm: exists out[0] != 2 || out[1] != 1
//
// Why a race (PTX ISA 8.7, 8.9): the flags are STORED strongly (through `volatile SyncFlag *`:
// st.volatile = relaxed.sys) but LOADED weakly: `ld.cg` is a cache operator on a weak load, not a
// strong one. A weak load and a strong store of one word are not morally strong; nothing orders
// the waiter's loads after the reporter's store (that order is what the barrier was to create): a
// data race on d_sync. The data are not synchronized either: the writer's __threadfence() (fence.sc)
// and volatile store form a release pattern, but on the reading side a weak load followed by
// __threadfence_block() is no acquire pattern (an acquire pattern needs a strong read), and block
// 0's release of the others (volatile stores of 0) follows only a __syncthreads(), no fence. So
// slot[b] (weak store before Sync) and the other block's weak load after Sync race, and the load
// may read the initial 0.
// Why a hang: the waits spin on WEAK loads. Memory fairness (docs/liveness.md; the PTX ISA itself
// promises no eventual visibility) obliges only strong reads to see a later write eventually; a
// weak read may keep returning the stale flag, so block 0 can wait for block 1's report forever.
#include <cassert>

typedef unsigned int SyncFlag;

__device__ __forceinline__ unsigned int ThreadLoadCG(unsigned int const *ptr)    // ThreadLoad<LOAD_CG>
{
    unsigned int retval;
    asm volatile("ld.cg.u32 %0, [%1];" : "=r"(retval) : "l"(ptr));
    return retval;
}

__device__ __forceinline__ void Sync(SyncFlag *d_sync)                          // GridBarrier::Sync
{
    volatile SyncFlag *d_vol_sync = d_sync;

    // Threadfence and syncthreads to make sure global writes are visible before
    // thread-0 reports in with its sync counter
    __threadfence();
    __syncthreads();

    if (blockIdx.x == 0) {
        // Report in ourselves
        if (threadIdx.x == 0) {
            d_vol_sync[blockIdx.x] = 1;
        }
        __syncthreads();
        // Wait for everyone else to report in
        for (int peer_block = threadIdx.x; peer_block < gridDim.x; peer_block += blockDim.x) {
            while (ThreadLoadCG(d_sync + peer_block) == 0) {
                __threadfence_block();
            }
        }
        __syncthreads();
        // Let everyone know it's safe to proceed
        for (int peer_block = threadIdx.x; peer_block < gridDim.x; peer_block += blockDim.x) {
            d_vol_sync[peer_block] = 0;
        }
    } else {
        if (threadIdx.x == 0) {
            // Report in
            d_vol_sync[blockIdx.x] = 1;
            // Wait for acknowledgment
            while (ThreadLoadCG(d_sync + blockIdx.x) == 1) {
                __threadfence_block();
            }
        }
        __syncthreads();
    }
}

__global__ void sweep(unsigned *d_sync, int *slot, int *out)
{
    const int b = blockIdx.x;
    slot[b] = b + 1;
    Sync(d_sync);
    int v = slot[1 - b];
    out[b] = v;
    assert(v == 2 - b);
}

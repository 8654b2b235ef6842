// CUTLASS sm90 stream-K fixup (deterministic reduction): three K-splits of one output tile; the
// first split stores its partials, the middle one waits for it and adds into the workspace, the
// final one waits and adds the workspace into its accumulators. Flags: cutlass::Barrier.
// Source: github:NVIDIA/cutlass (commit 7107b055, 2026-08-20)
//   include/cutlass/gemm/kernel/sm90_tile_scheduler_stream_k.hpp: PersistentTileSchedulerSm90StreamK::fixup
//     (K_idx == 0: BlockStripedReduceT::store; else BarrierManager::wait_eq(..., lock_idx,
//      work_tile_info.K_idx) then BlockStripedReduceT::reduce; BarrierManager::arrive_inc(...,
//      increment = k_tile_count); final split: wait_eq(..., K_idx) then BlockStripedReduceT::load_add);
//   include/cutlass/barrier.h: GenericBarrier::wait_eq, arrive_inc, ld_acquire, red_release (quoted below);
//   include/cutlass/block_striped.h: BlockStripedReduce::reduce (cutlass::atomic_add, i.e. atomicAdd).
// Cut: the MMA and epilogue (split k's accumulator is k + 1 per element), one int per thread, 2
// threads per block; the sm90 code syncs through NamedBarrierSync (bar.sync id, ThreadCount), which
// needs a multiple of 32 threads — here GenericBarrier<SyncthreadsSync> (CUTLASS's cutlass::Barrier,
// the same flag code with __syncthreads()); every split processes one k tile (increment 1).
//
// ptxmm: launch fixup<<<3, 2>>>(int lock_workspace[1], int reduction_workspace[2], int out[2])
// ptxmm: expect ok
// ptxmm: forall out[0] == 6 && out[1] == 6
//
// Why no race (PTX ISA 8.9): each hand-off is release -> acquire. Releasing block: every thread's
// workspace access, then __syncthreads() (the CTA barrier synchronizes its arrivals with its
// waits), then thread 0's fence.acq_rel.gpu; red.relaxed.gpu (a release pattern: fence then a
// strong write). Acquiring block: thread 0's ld.global.acquire.gpu reads the flag value written by
// that red (or by a later red in the flag's RMW chain: observation order), an acquire operation,
// then __syncthreads() hands it to the other thread. Release and acquire are morally strong
// (.gpu, one grid), so base causality order runs from every workspace access of one split to every
// workspace access of the next. The first split's weak store is thus ordered before the middle
// split's atomicAdd (strong), which is ordered before the final split's weak load.
// Why the assertion holds: coherence makes each access read the previous split's value: 1, then
// 1 + 2, then 3 + 3 = 6. The spins end: the flag reaches 1 and 2 without waiting on later splits.
#include <cassert>

// cutlass::GenericBarrier<detail::SyncthreadsSync> (= cutlass::Barrier), include/cutlass/barrier.h
struct Barrier {
    __device__ static int ld_acquire(int *ptr)
    {
        int state = 0;
        // Acquire pattern using acquire modifier
        asm volatile("ld.global.acquire.gpu.b32 %0, [%1];\n" : "=r"(state) : "l"(ptr));
        return state;
    }

    __device__ static void red_release(int *ptr, int val)
    {
        // Release pattern using acq_rel fence + relaxed modifier.  (The fence also releases data
        // that was weakly-written by other threads prior to the last syncthreads)
        asm volatile("fence.acq_rel.gpu;\n");
        asm volatile("red.relaxed.gpu.global.add.s32 [%0], %1;\n" : : "l"(ptr), "r"(val));
    }

    __device__ static void wait_eq(void *lock_ptr, int thread_idx, int flag_idx, int val = 1)
    {
        int *flag_ptr = reinterpret_cast<int *>(lock_ptr) + flag_idx;
        if (thread_idx == 0) {
            // Spin-loop
            #pragma unroll 1
            while (ld_acquire(flag_ptr) != val) {}
        }
        __syncthreads();
    }

    __device__ static void wait_eq_reset(void *lock_ptr, int thread_idx, int flag_idx, int val = 1)
    {
        int *flag_ptr = reinterpret_cast<int *>(lock_ptr) + flag_idx;
        if (thread_idx == 0) {
            // Spin-loop
            #pragma unroll 1
            while (atomicCAS(flag_ptr, val, 0) != val) {}
        }
        __syncthreads();
    }

    __device__ static void arrive_inc(void *lock_ptr, int thread_idx, int flag_idx, int val = 1)
    {
        int *flag_ptr = reinterpret_cast<int *>(lock_ptr) + flag_idx;
        __syncthreads();
        if (thread_idx == 0) {
            red_release(flag_ptr, val);
        }
    }
};

__global__ void fixup(int *lock_workspace, int *reduction_workspace, int *out)
{
    const int barrier_group_thread_idx = threadIdx.x;
    const int K_idx = blockIdx.x;
    const int lock_idx = 0;
    const bool final_split = K_idx == int(gridDim.x) - 1;
    int accumulator = K_idx + 1;
    if (!final_split) {
        if (K_idx == 0) {
            reduction_workspace[barrier_group_thread_idx] = accumulator;            // store
        } else {
            Barrier::wait_eq(lock_workspace, barrier_group_thread_idx, lock_idx, K_idx);
            atomicAdd(&reduction_workspace[barrier_group_thread_idx], accumulator);  // reduce
        }
        int increment = 1;                               // work_tile_info.k_tile_count
        Barrier::arrive_inc(lock_workspace, barrier_group_thread_idx, lock_idx, increment);
    } else {
        Barrier::wait_eq(lock_workspace, barrier_group_thread_idx, lock_idx, K_idx);
        accumulator += reduction_workspace[barrier_group_thread_idx];               // load_add
        out[barrier_group_thread_idx] = accumulator;
        assert(accumulator == 6);
    }
}

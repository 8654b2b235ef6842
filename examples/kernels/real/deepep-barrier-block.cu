// DeepEP's intranode notify_dispatch: each rank writes its token counts into every peer's buffer,
// then barrier_block<kNumRanks>() — fence.acq_rel.sys, __syncthreads(), atomicAdd_system on its own
// counter / atomicSub_system on the peer's, a volatile spin with __all_sync — then reads the
// counts the peers wrote into its own buffer with plain loads.
// Source: github:deepseek-ai/DeepEP (commit dd758caf, 2026-07-14)
//   csrc/kernels/legacy/utils.cuh: barrier_block<kNumRanks, kSyncOnly = false>, memory_fence
//     (asm volatile("fence.acq_rel.sys;" ::: "memory")), ld_volatile_global
//     (asm volatile("ld.volatile.global.s32 %0, [%1];" : "=r"(ret) : "l"(ptr))), quoted in the code;
//   csrc/kernels/legacy/intranode.cu: notify_dispatch (sm_id == 0 part: per_rank_buffer[rank *
//     kNumRanks + thread_id] = num_tokens_per_rank[thread_id]; barrier_block<kNumRanks>(...);
//     local_per_rank_buffer[i * kNumRanks + thread_id] += local_per_rank_buffer[(i - 1) * kNumRanks + thread_id];
//     if (thread_id == rank) *moe_recv_counter_mapped = local_per_rank_buffer[(kNumRanks - 1) * kNumRanks + rank];)
//   csrc/kernels/legacy/compiled.cuh: #define LEGACY_FINISHED_SUM_TAG 1024
// Cut (single-GPU variant): two ranks = two blocks of one grid, 2 threads each (kNumRanks = 2);
// the pointer tables buffer_ptrs/barrier_signal_ptrs are address arithmetic on one buffer
// (Peers); the first kSyncOnly barrier, the expert counts, the timeout (clock64/printf/trap) and
// the later prefix-matrix copies.
//
// ptxmm: launch notify_dispatch<<<2, 2>>>(int num_tokens_per_rank[4] = {1, 2, 3, 4}, int buffer[8], int signals[4], int recv[2])
// ptxmm: expect race, assert-fails
// ptxmm: exists recv[0] != 4 || recv[1] != 6
//
// Why a race (PTX ISA 8.9): rank i's thread r stores its count into rank r's buffer (weak), then
// fence.acq_rel.sys and (after bar.sync) the atomics: a release pattern towards the counters. Rank
// r's threads spin with ld.volatile (relaxed.sys) on their own counter slots and leave with
// __all_sync and __syncthreads(): the load that sees the count reach 0 is followed by no fence and
// is no acquire, and this rank's own fence.acq_rel.sys came BEFORE its atomics. No acquire pattern:
// no synchronizes-with, so rank i's weak store and rank r's weak load of that entry are unordered —
// a data race (ld_acquire_sys_global, defined in the same utils.cuh, would acquire).
// Why the assertion can fail: the sum may read 0 for the peer's count. The spin ends in every fair
// execution: each slot gets +1024 from its owner and -1024 from the peer, once each.
#include <cassert>

#define LEGACY_FINISHED_SUM_TAG 1024

__device__ __forceinline__ void memory_fence()
{
    asm volatile("fence.acq_rel.sys;" ::: "memory");
}

__device__ __forceinline__ int ld_volatile_global(const int *ptr)
{
    int ret;
    asm volatile("ld.volatile.global.s32 %0, [%1];" : "=r"(ret) : "l"(ptr));
    return ret;
}

// barrier_signal_ptrs[r] / buffer_ptrs[r]: rank r's slice (pointer tables in DeepEP)
template <int N>
struct Peers {
    int *base;
    __device__ int *operator[](int r) const { return base + N * r; }
};

template <int kNumRanks, bool kSyncOnly = false>
__forceinline__ __device__ void barrier_block(Peers<2> barrier_signal_ptrs, int rank)
{
    auto thread_id = static_cast<int>(threadIdx.x);
    // For non-sync-only cases, the memory operations by other threads in the block must be visible to the `sys` scope
    if constexpr (not kSyncOnly) {
        memory_fence();
        __syncthreads();
    }
    // Add self-ranks, sub other ranks
    if (thread_id < kNumRanks) {
        atomicAdd_system(barrier_signal_ptrs[rank] + thread_id, LEGACY_FINISHED_SUM_TAG);
        atomicSub_system(barrier_signal_ptrs[thread_id] + rank, LEGACY_FINISHED_SUM_TAG);
    }
    while (true) {
        auto value = thread_id < kNumRanks ? ld_volatile_global(barrier_signal_ptrs[rank] + thread_id) : 0;
        if (__all_sync(0xffffffff, value <= 0))
            break;
    }
    __syncthreads();
}

__global__ void notify_dispatch(const int *num_tokens_per_rank, int *buffer, int *signals, int *recv)
{
    constexpr int kNumRanks = 2;
    const int rank = blockIdx.x;
    auto thread_id = static_cast<int>(threadIdx.x);
    Peers<4> buffer_ptrs{buffer};
    Peers<2> barrier_signal_ptrs{signals};
    const int *my_tokens = num_tokens_per_rank + rank * kNumRanks;
    if (thread_id < kNumRanks) {
        int *per_rank_buffer = buffer_ptrs[thread_id];
        per_rank_buffer[rank * kNumRanks + thread_id] = my_tokens[thread_id];
    }
    // Wait for all ranks to be finished
    barrier_block<kNumRanks>(barrier_signal_ptrs, rank);
    // Sum per-rank counts and return to CPU
    auto local_per_rank_buffer = buffer_ptrs[rank];
    if (thread_id < kNumRanks) {
        #pragma unroll
        for (int i = 1; i < kNumRanks; ++i)
            local_per_rank_buffer[i * kNumRanks + thread_id] += local_per_rank_buffer[(i - 1) * kNumRanks + thread_id];
        if (thread_id == rank) {
            int v = local_per_rank_buffer[(kNumRanks - 1) * kNumRanks + rank];
            recv[rank] = v;                          // *moe_recv_counter_mapped = ...
            assert(v == num_tokens_per_rank[rank] + num_tokens_per_rank[kNumRanks + rank]);
        }
    }
}

// vLLM's custom all-reduce, two-stage, with the release/acquire barrier that replaced the volatile
// flags (vllm-end-sync-threadfence.cu): barrier_at_start (volatile flags, nothing to publish) and
// barrier_at_end<ngpus, final_sync = false> (st.release.sys / ld.acquire.sys), an incrementing
// per-block flag value instead of reset-to-0.
// Source: github vllm-project/vllm csrc/custom_all_reduce.cuh after the flag rewrite (text read
// from later copies of the file in other public repositories; commit c9eabec7, the upstream
// version read directly, predates it) — quoted:
//   static DINLINE void st_flag_release(FlagType* flag_addr, FlagType flag) {
//     asm volatile("st.release.sys.global.u32 [%1], %0;" ::"r"(flag), "l"(flag_addr)); }
//   static DINLINE FlagType ld_flag_acquire(FlagType* flag_addr) { FlagType flag;
//     asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(flag) : "l"(flag_addr)); return flag; }
//   st_flag_volatile / ld_flag_volatile: "st.volatile.global.u32" / "ld.volatile.global.u32"
//   barrier_at_start, barrier_at_end (as written below, self_sg->_flag[blockIdx.x] and all).
// Cut (single-GPU variant): the two ranks are the two blocks of one grid (rank = blockIdx.x; each
// rank's Signal and tmp buffer are slices of global buffers; each rank's kernel is one block, so
// the Signal's block index is 0), ngpus = 2, int data, size = 2 per rank (part = 1), packed types.
//
// ptxmm: launch cross_device_reduce_2stage<<<2, 2>>>(int in[4] = {1, 2, 10, 20}, unsigned start[4], unsigned end[4], unsigned flag[2], int tmp[2], int result[4])
// ptxmm: expect ok
// ptxmm: forall result[0] == 11 && result[1] == 22 && result[2] == 11 && result[3] == 22
//
// Why no race (PTX ISA 8.9): stage 1's weak tmp store, __syncthreads() (bar.sync: arrive
// synchronizes with wait) and thread t's st.release.sys of the peer's end flag form a release;
// the peer's ld.acquire.sys that reads it (the spin's last load) is an acquire; both .sys, morally
// strong: they synchronize, and the peer's __syncthreads() carries the order to every thread, so
// the weak tmp store is before the peer's weak tmp load in causality order (cumulativity through
// the barriers). The _flag word is written by thread 0 only after a __syncthreads() that follows
// every thread's read of it in the same barrier call. The start/end flags are strong.
// Why the assertion holds: coherence. The spins end: each flag slot is written once per launch.
#include <cassert>
#include <cstdint>

using FlagType = uint32_t;
#define DINLINE __device__ __forceinline__

static DINLINE void st_flag_release(FlagType *flag_addr, FlagType flag)
{
    asm volatile("st.release.sys.global.u32 [%1], %0;" ::"r"(flag), "l"(flag_addr));
}
static DINLINE FlagType ld_flag_acquire(FlagType *flag_addr)
{
    FlagType flag;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(flag) : "l"(flag_addr));
    return flag;
}
static DINLINE void st_flag_volatile(FlagType *flag_addr, FlagType flag)
{
    asm volatile("st.volatile.global.u32 [%1], %0;" ::"r"(flag), "l"(flag_addr));
}
static DINLINE FlagType ld_flag_volatile(FlagType *flag_addr)
{
    FlagType flag;
    asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(flag) : "l"(flag_addr));
    return flag;
}

// Signal of rank r: start[r * 2 + i], end[r * 2 + i], _flag[r]  (one block per rank: blockIdx 0)
template <int ngpus>
DINLINE void barrier_at_start(FlagType *start, FlagType *_flag, int rank)
{
    uint32_t flag = _flag[rank] + 1;
    if (threadIdx.x < ngpus) {
        auto peer_counter_ptr = &start[threadIdx.x * 2 + rank];
        auto self_counter_ptr = &start[rank * 2 + threadIdx.x];
        st_flag_volatile(peer_counter_ptr, flag);
        while (ld_flag_volatile(self_counter_ptr) != flag);
    }
    __syncthreads();
    if (threadIdx.x == 0) _flag[rank] = flag;
}

template <int ngpus, bool final_sync = false>
DINLINE void barrier_at_end(FlagType *end, FlagType *_flag, int rank)
{
    __syncthreads();
    uint32_t flag = _flag[rank] + 1;
    if (threadIdx.x < ngpus) {
        auto peer_counter_ptr = &end[threadIdx.x * 2 + rank];
        auto self_counter_ptr = &end[rank * 2 + threadIdx.x];
        if constexpr (!final_sync) {
            st_flag_release(peer_counter_ptr, flag);
            while (ld_flag_acquire(self_counter_ptr) != flag);
        } else {
            st_flag_volatile(peer_counter_ptr, flag);
            while (ld_flag_volatile(self_counter_ptr) != flag);
        }
    }
    if constexpr (!final_sync) __syncthreads();
    if (threadIdx.x == 0) _flag[rank] = flag;
}

__global__ void cross_device_reduce_2stage(const int *in, unsigned *start, unsigned *end, unsigned *_flag,
                                           int *tmp, int *result)
{
    constexpr int ngpus = 2;
    const int rank = blockIdx.x;
    const int size = 2;
    int tid = threadIdx.x;
    int stride = blockDim.x;
    int part = size / ngpus;
    int start_idx = rank * part;
    int end_idx = rank == ngpus - 1 ? size : start_idx + part;
    int largest_part = part + size % ngpus;
    const int *ptrs[ngpus];
    int *tmps[ngpus];
#pragma unroll
    for (int i = 0; i < ngpus; i++) {
        int target = (rank + i) % ngpus;
        ptrs[i] = in + target * size;
        tmps[i] = tmp + target * part;
    }
    auto tmp_out = tmps[0];
    barrier_at_start<ngpus>(start, _flag, rank);
    for (int idx = start_idx + tid; idx < end_idx; idx += stride) {
        tmp_out[idx - start_idx] = ptrs[0][idx] + ptrs[1][idx];   // packed_reduce
    }
    barrier_at_end<ngpus>(end, _flag, rank);
    for (int idx = tid; idx < largest_part; idx += stride) {
#pragma unroll
        for (int i = 0; i < ngpus; i++) {
            int gather_from_rank = ((rank + i) % ngpus);
            if (gather_from_rank == ngpus - 1 || idx < part) {
                int dst_idx = gather_from_rank * part + idx;
                int v = tmps[i][idx];
                result[rank * size + dst_idx] = v;
                assert(v == in[dst_idx] + in[size + dst_idx]);
            }
        }
    }
}

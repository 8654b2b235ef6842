// vLLM's custom all-reduce, ONE-stage kernel (the one used for 2 ranks and small inputs), which
// ends with barrier_at_end<ngpus, final_sync = true>: volatile flags (nothing to publish) and NO
// __syncthreads() before thread 0 advances the block's flag counter `_flag` — which the other
// flag thread reads at the start of the same barrier call.
// Source: github vllm-project/vllm csrc/custom_all_reduce.cuh after the flag rewrite (text read
// from later copies of the file in other public repositories; commit c9eabec7, the upstream
// version read directly, predates it) — barrier_at_start, barrier_at_end and cross_device_reduce_1stage
// as written below; quoted: `if constexpr (!final_sync) __syncthreads();
//   if (threadIdx.x == 0) self_sg->_flag[blockIdx.x] = flag;`
// Cut (single-GPU variant): the two ranks are the two blocks of one grid (rank = blockIdx.x;
// Signals are slices of global buffers; one block per rank), ngpus = 2, int data, size = 2.
//
// ptxmm: launch cross_device_reduce_1stage<<<2, 2>>>(int in[4] = {1, 2, 10, 20}, unsigned start[4], unsigned end[4], unsigned flag[2], int result[4])
// ptxmm: expect race, hang
// ptxmm: forall result[0] == 11 && result[1] == 22 && result[2] == 11 && result[3] == 22
//
// Why a race (PTX ISA 8.9): in barrier_at_end<2, true> every thread loads _flag[rank] (weak) after
// the leading __syncthreads(); threads 0 and 1 then each raise one peer's end flag and spin on their
// own slot, and thread 0 stores _flag[rank] (weak) as soon as ITS spin ends — no barrier between
// thread 1's load and thread 0's store (the final_sync variant drops the second __syncthreads()).
// Thread 0's spin waits only for the peer's thread 0, so nothing orders thread 1's load before
// thread 0's store: a data race in one CTA. (In the start barrier the store follows a
// __syncthreads(), so there is none there.)
// Why a hang: if thread 1's load reads thread 0's new value (2), thread 1 computes flag 3, raises
// the peer's slot to 3 and waits for its own slot to become 3 while the peer's thread 1 (which read
// 1) writes 2: it spins forever in a fair execution (liveness: the spin's exit value is never
// stored). The data are right whenever the kernel ends: the inputs are written before the launch.
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

__global__ void cross_device_reduce_1stage(const int *in, unsigned *start, unsigned *end, unsigned *_flag,
                                           int *result)
{
    constexpr int ngpus = 2;
    const int rank = blockIdx.x;
    const int size = 2;
    barrier_at_start<ngpus>(start, _flag, rank);
    for (int idx = threadIdx.x; idx < size; idx += blockDim.x) {
        int v = in[idx] + in[size + idx];                        // packed_reduce over both ranks
        result[rank * size + idx] = v;
    }
    barrier_at_end<ngpus, true>(end, _flag, rank);
    if (threadIdx.x == 0) {
        assert(result[rank * size] == in[0] + in[size]);
    }
}

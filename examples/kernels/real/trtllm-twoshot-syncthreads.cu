// TensorRT-LLM's two-shot custom all-reduce as of commit 027cd518: a start
// barrier (block 0 stores the flag to each peer, every block spins on a VOLATILE read), a
// reduce-scatter into the rank's own comm buffer, `__syncthreads()` then a release/acquire flag
// exchange per block, `__syncthreads()`, and the all-gather.
// Source: NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/customAllReduceKernels.cu (commit
//   027cd518): st_flag_release ("st.global.release.sys.b32"), ld_flag_acquire
//   ("ld.global.acquire.sys.b32"), twoShotAllReduceKernel — quoted in the code below, e.g.
//   `params.peer_barrier_ptrs[tidx][params.local_rank] = params.barrier_flag;` and
//   `volatile uint32_t* barrier_d = params.peer_barrier_ptrs[params.local_rank];
//    ... while (barrier_d[tidx] != params.barrier_flag) {}`.
// Cut (single-GPU variant): two ranks = two blocks of one grid (local_rank = blockIdx.x, one block
// per rank: bidx = 0), 2 threads, one int per thread instead of a 16-byte pack, the comm buffers
// hold the inputs at launch (the host's copy before the kernel), barrier_flag = 1, the pointer tables
// params.peer_barrier_ptrs / peer_comm_buffer_ptrs written as address arithmetic (Peers).
//
// ptxmm: launch twoShotAllReduceKernel<<<2, 2>>>(int comm[8] = {1, 2, 3, 4, 10, 20, 30, 40}, unsigned barrier[8], int output[8], 1)
// ptxmm: expect race
// ptxmm: forall output[0] == 11 && output[1] == 22 && output[2] == 33 && output[3] == 44 && output[4] == 11 && output[5] == 22 && output[6] == 33 && output[7] == 44
//
// Why a race (PTX ISA 8.7, 8.9) — on the START flag only: block 0 writes the peer's flag with a
// plain store (AllReduceParams::peer_barrier_ptrs is `uint32_t* [MAX_RANKS_PER_NODE]` in
// customAllReduceKernels.h: st.global, weak) while the peer spins on it through a
// `volatile uint32_t*` (ld.volatile = relaxed.sys, strong). A weak and a strong access are not
// morally strong, and nothing orders this store before that load: a data race on the flag word.
// (The spin still ends: the store is the only write of the awaited value.)
// Why no race on the data: the reduce-scatter reads the peers' inputs (written before the launch)
// and writes this rank's own region; before the all-gather reads a peer's region, __syncthreads()
// (bar.sync: cumulativity over the block's stores) then st.global.release.sys by thread t, and the
// peer's ld.global.acquire.sys of that flag then __syncthreads(): release -> acquire, morally
// strong (.sys), so every reduce-scatter store is before every all-gather load of it.
// Why the condition holds: coherence: each gathered value is the one sum stored.
#include <cassert>
#include <cstdint>

static inline __device__ void st_flag_release(uint32_t &flag, uint32_t *flag_addr)
{
    asm volatile("st.global.release.sys.b32 [%1], %0;" ::"r"(flag), "l"(flag_addr));
}

static inline __device__ void ld_flag_acquire(uint32_t &flag, uint32_t *flag_addr)
{
    asm volatile("ld.global.acquire.sys.b32 %0, [%1];" : "=r"(flag) : "l"(flag_addr));
}

// params.peer_barrier_ptrs[r] / peer_comm_buffer_ptrs[r]: rank r's slice (a pointer table in TRT-LLM)
template <typename T, int N>
struct Peers {
    T *base;
    __device__ T *operator[](size_t r) const { return base + N * r; }
};

__global__ void twoShotAllReduceKernel(int *comm, unsigned *barrier, int *output, unsigned barrier_flag)
{
    constexpr int RANKS_PER_NODE = 2;
    const int local_rank = blockIdx.x;
    const int bidx = 0;                          // one block per rank
    const int tidx = threadIdx.x;
    const int elts_total = 4;
    const int elts_per_rank = elts_total / RANKS_PER_NODE;
    const int elts_per_block = elts_per_rank;
    const int rank_offset = local_rank * elts_per_rank;
    Peers<uint32_t, 4> peer_barrier_ptrs{barrier};
    Peers<int, 4> peer_comm_buffer_ptrs{comm};
    int *local_output_buffer_ptr = output + local_rank * elts_total;

    const size_t block_start = rank_offset;
    const size_t block_offset = bidx * elts_per_block + tidx;
    size_t max_offset = min(block_start + block_offset + elts_per_block, size_t(elts_total));

    // Synchronize the ranks.
    volatile uint32_t *barrier_d = peer_barrier_ptrs[local_rank];
    if (tidx < RANKS_PER_NODE) {
        // The 1st block notifies the other ranks.
        if (bidx == 0) {
            peer_barrier_ptrs[tidx][local_rank] = barrier_flag;
        }
        // Busy-wait until all ranks are ready.
        while (barrier_d[tidx] != barrier_flag) {
        }
    }
    // Make sure we can move on...
    __syncthreads();

    int *src_d[RANKS_PER_NODE];
    size_t dst_rank[RANKS_PER_NODE];
#pragma unroll
    for (int ii = 0; ii < RANKS_PER_NODE; ++ii) {
        int rank = (local_rank + ii) % RANKS_PER_NODE;
        src_d[ii] = peer_comm_buffer_ptrs[rank];
        dst_rank[ii] = rank;
    }
    // Each block accumulates the values from the different GPUs on the same node.
    for (size_t local_offset = block_start + block_offset; local_offset < max_offset; local_offset += blockDim.x) {
        int vals[RANKS_PER_NODE];
#pragma unroll
        for (int ii = 0; ii < RANKS_PER_NODE; ++ii) {
            vals[ii] = src_d[ii][local_offset];
        }
        int sums = 0;
#pragma unroll
        for (int ii = 0; ii < RANKS_PER_NODE; ++ii) {
            sums = sums + vals[ii];
        }
        // Store to the local buffer.
        src_d[0][local_offset] = sums;
    }
    // sync threads to make sure all block threads have the sums
    __syncthreads();
    // barriers among the blocks with the same idx (release-acquire semantics)
    if (tidx < RANKS_PER_NODE) {
        // The all blocks notifies the other ranks.
        uint32_t flag_block_offset = RANKS_PER_NODE + bidx * RANKS_PER_NODE;
        st_flag_release(barrier_flag, peer_barrier_ptrs[tidx] + flag_block_offset + local_rank);
        // Busy-wait until all ranks are ready.
        uint32_t rank_barrier = 0;
        uint32_t *peer_barrier_d = peer_barrier_ptrs[local_rank] + flag_block_offset + tidx;
        do {
            ld_flag_acquire(rank_barrier, peer_barrier_d);
        } while (rank_barrier != barrier_flag);
    }
    // sync threads to make sure all other ranks has the final partial results
    __syncthreads();
    // Gather all needed elts from other intra-node ranks
    for (size_t local_offset = block_offset; local_offset < elts_per_rank; local_offset += blockDim.x) {
#pragma unroll
        for (int ii = 0; ii < RANKS_PER_NODE; ++ii) {
            // use round-robin gathering from other ranks
            size_t offset_rank = dst_rank[ii] * elts_per_rank + local_offset;
            if (offset_rank >= elts_total) {
                continue;
            }
            int v = src_d[ii][offset_rank];
            local_output_buffer_ptr[offset_rank] = v;
            assert(v == 11 * int(offset_rank + 1));
        }
    }
}

// TensorRT-LLM's one-shot custom all-reduce (non-PUSH mode): every thread copies its chunk of the
// input into its rank's shareable buffer, then block_barrier() — in which only the threads
// tidx < world_size store a release flag, with NO __syncthreads() before it — then every thread
// reads the same chunk from every rank's buffer and sums.
// Source: NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/customAllReduceKernels.cu, 2024 version
//   (text read from a later copy of the file in another public repository, the version with
//   namespace reduce_fusion and PUSH_MODE; commit 027cd518, the upstream version read directly,
//   predates block_barrier): st_flag_release, ld_flag_acquire, block_barrier, oneShotAllReduceKernel
//   (quoted: `*reinterpret_cast<int4*>(&local_shared_buffer[iter_offset]) = *reinterpret_cast<int4
//   const*>(&local_input_buffer[iter_offset]);` then `block_barrier(params.peer_barrier_ptrs_in,
//   barrier_flag, params.local_rank, RANKS_PER_NODE, tidx, bidx);`).
// Cut (single-GPU variant): the two ranks are the two blocks of one grid (local_rank = blockIdx.x,
// one block per rank so bidx = 0), one int per thread instead of an int4 of 8 halves,
// barrier_flag = 2 (an even call: no parity offset), the peer pointer table `uint32_t** signals`
// written as address arithmetic on one buffer (PeerBarriers), MAX_ALL_REDUCE_BLOCKS unused,
// cudaGridDependencySynchronize/cudaTriggerProgrammaticLaunchCompletion, update_barrier_flag.
//
// ptxmm: launch oneShotAllReduceKernel<<<2, 2>>>(int input[4] = {1, 2, 10, 20}, int comm[4], unsigned barrier[8], int output[4], 2)
// ptxmm: expect race, assert-fails
// ptxmm: exists output[0] != 11 || output[1] != 22 || output[2] != 11 || output[3] != 22
//
// Why a race (PTX ISA 8.9): rank r's thread t stores comm[r][t] (weak) and, if t < 2, stores the
// flag for PEER t with st.global.release.sys: a release, but it orders only thread t's own earlier
// accesses — no bar.sync precedes it, so the other thread's copy is not before it. Rank 1's thread
// 0 waits (ld.global.acquire.sys) for the flag of rank 0's thread 1, then __syncthreads(), then
// reads comm[0][0], which rank 0's thread 0 stored: that store reaches no release that rank 1
// acquired (rank 0's thread 0 releases to rank 0 only). The weak store and the weak load are not
// ordered by causality order: a data race. (A later TRT-LLM block_barrier takes `bool start` and
// runs __syncthreads() first when !start — the barrier before the release that cumulativity needs.)
// Why the assertion can fail: the sum may use the initial 0 for the peer's element. The spins end:
// each flag slot is written once with the awaited value.
#include <cassert>
#include <cstdint>

static inline __device__ void st_flag_release(uint32_t const &flag, uint32_t *flag_addr)
{
    asm volatile("st.global.release.sys.b32 [%1], %0;" ::"r"(flag), "l"(flag_addr));
}

static inline __device__ uint32_t ld_flag_acquire(uint32_t *flag_addr)
{
    uint32_t flag;
    asm volatile("ld.global.acquire.sys.b32 %0, [%1];" : "=r"(flag) : "l"(flag_addr));
    return flag;
}

// signals[r]: rank r's barrier words (a table of peer pointers in TRT-LLM; here a slice)
struct PeerBarriers {
    uint32_t *base;
    __device__ uint32_t *operator[](size_t r) const { return base + 4 * r; }
};

__inline__ __device__ void block_barrier(PeerBarriers signals, uint32_t const flag, size_t const local_rank,
                                         size_t const world_size, int const tidx, int const bidx)
{
    // After this function, the block of id == bidx of each GPU has reached the barrier
    if (tidx < world_size) {
        // Block broadcast its flag (local_rank on emitting dimension) to all receivers
        uint32_t flag_block_offset = (bidx + 1) * world_size;
        st_flag_release(flag, signals[tidx] + flag_block_offset + local_rank);
        // Blocks check that corresponding blocks on other GPUs have also set the flag
        uint32_t *peer_barrier_d = signals[local_rank] + flag_block_offset + tidx;
        while (ld_flag_acquire(peer_barrier_d) != flag) {
        }
    }
    __syncthreads();
}

__global__ void oneShotAllReduceKernel(const int *input, int *comm, unsigned *barrier, int *output, unsigned barrier_flag)
{
    constexpr int RANKS_PER_NODE = 2;
    const int local_rank = blockIdx.x;
    const int bidx = 0;                          // one block per rank
    const int tidx = threadIdx.x;
    const int elts_total = 2;
    PeerBarriers peer_barrier_ptrs_in{barrier};
    const int *local_input_buffer = input + local_rank * elts_total;
    int *local_shared_buffer = comm + local_rank * elts_total;
    int *local_output_buffer = output + local_rank * elts_total;
    const int *buffers[RANKS_PER_NODE];
#pragma unroll
    for (int ii = 0; ii < RANKS_PER_NODE; ++ii) {
        // buffers[0] is always the local buffers. Helps load balancing reads.
        int rank = (local_rank + ii) % RANKS_PER_NODE;
        buffers[ii] = comm + rank * elts_total;
    }
    // Copy from local buffer to shareable buffer
    for (int iter_offset = tidx; iter_offset < elts_total; iter_offset += blockDim.x) {
        local_shared_buffer[iter_offset] = local_input_buffer[iter_offset];
    }
    // wait for equivalent blocks of other GPUs to have copied data to their shareable buffer
    block_barrier(peer_barrier_ptrs_in, barrier_flag, local_rank, RANKS_PER_NODE, tidx, bidx);
    // Each block accumulates the values from the different GPUs on the same node.
    for (int iter_offset = tidx; iter_offset < elts_total; iter_offset += blockDim.x) {
        int vals[RANKS_PER_NODE];
#pragma unroll
        for (int ii = 0; ii < RANKS_PER_NODE; ++ii) {
            vals[ii] = buffers[ii][iter_offset];
        }
        int sums = 0;
#pragma unroll
        for (int rank = 0; rank < RANKS_PER_NODE; ++rank) {
            // Always reduce from rank 0 to ensure stable reduce order.
            int ii = (rank + RANKS_PER_NODE - local_rank) % RANKS_PER_NODE;
            sums = sums + vals[ii];
        }
        local_output_buffer[iter_offset] = sums;
        assert(sums == input[iter_offset] + input[elts_total + iter_offset]);
    }
}

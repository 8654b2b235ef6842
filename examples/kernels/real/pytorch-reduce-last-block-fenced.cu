// FIXED TWIN of pytorch-reduce-last-block.cu (not PyTorch's code): mark_block_finished() with a
// __threadfence() right after the ticket's atomicAdd, so the last block acquires. Otherwise
// PyTorch's multi-block reduction (ReduceOp::global_reduce): each block stores its partial into the
// staging buffer, __threadfence(), __syncthreads(), and mark_block_finished() draws a ticket with
// atomicAdd on `semaphores`; the last block reads every partial back with plain loads.
// Source: pytorch/pytorch aten/src/ATen/native/cuda/Reduce.cuh (commits 00ef8f06, 6f75eba8), ReduceOp:
//   C10_DEVICE bool mark_block_finished() const {
//     __shared__ bool is_last_block_done_shared;
//     __syncthreads();
//     if (threadIdx.x == 0 && threadIdx.y == 0) {
//       int prev_blocks_finished = atomicAdd(&semaphores[blockIdx.x], 1);
//       is_last_block_done_shared = (prev_blocks_finished == gridDim.y - 1);
//     }
//     __syncthreads();
//     return is_last_block_done_shared; }
//   global_reduce: if (should_store) { reduce_buffer[offset] = value; }
//     __threadfence(); // make sure writes are globally visible
//     __syncthreads(); // if multiple warps in this block wrote to staging, make sure they're all done
//     bool is_last_block_done = mark_block_finished();
//     if (is_last_block_done) { ... for (; input_offset < config.ctas_per_output; input_offset += step) {
//         index_t idx = config.staging_memory_offset(input_offset); arg_t next = reduce_buffer[idx];
//         value = ops.combine(value, next); } value = block_x_reduce(value, shared_memory); ... }
// Cut: the input pass and the config/offset calculators (block y's value is in[y]; thread 0
// stores it, thread x of the last block reads staging entry x), block_x_reduce written as its
// shared-memory step (its warp-shuffle tail cut), int sum for ops.combine; two blocks along y
// (ctas_per_output = 2) of two threads.
//
// ptxmm: launch reduce_kernel<<<(1, 2, 1), 2>>>(int in[2] = {3, 4}, int cta_buf[2], int semaphores[1], int out[1])
// ptxmm: expect ok
// ptxmm: forall out[0] == 7
//
// Why no race (PTX ISA 8.9): the storing block's weak staging store, fence.sc.gpu, (bar.sync),
// atomicAdd is a release pattern. In the last block, thread 0's atomicAdd reads the ticket
// written by the other block's atomicAdd (an RMW on the same word: observation order) and is now
// followed by __threadfence() — an acquire pattern; both fences are .gpu and the atomics are
// morally strong, so the release synchronizes with it; then bar.sync hands the order to thread 1.
// Every weak staging load of the last block is after the other block's store in causality order.
// Why the assertion holds: coherence — each entry is stored once before it is read: 3 + 4 = 7.
#include <cassert>

__device__ bool mark_block_finished(int *semaphores)
{
    __shared__ bool is_last_block_done_shared;
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        int prev_blocks_finished = atomicAdd(&semaphores[blockIdx.x], 1);
        __threadfence();                         // added: the acquire side
        is_last_block_done_shared = (prev_blocks_finished == gridDim.y - 1);
    }
    __syncthreads();
    return is_last_block_done_shared;
}

__global__ void reduce_kernel(const int *in, int *cta_buf, int *semaphores, int *out)
{
    __shared__ int shared_memory[2];
    int *reduce_buffer = cta_buf;
    int value = in[blockIdx.y];                  // thread_reduce / block reductions of this block
    bool should_store = threadIdx.x == 0;
    if (should_store) {
        int offset = blockIdx.y;                 // config.staging_memory_offset(blockIdx.y)
        reduce_buffer[offset] = value;
    }
    __threadfence(); // make sure writes are globally visible
    __syncthreads(); // if multiple warps in this block wrote to staging, make sure they're all done
    bool is_last_block_done = mark_block_finished(semaphores);
    if (is_last_block_done) {
        value = 0;                               // ident
        for (int input_offset = threadIdx.x; input_offset < int(gridDim.y); input_offset += blockDim.x) {
            int next = reduce_buffer[input_offset];
            value = value + next;
        }
        shared_memory[threadIdx.x] = value;      // block_x_reduce (shared-memory step)
        __syncthreads();
        if (threadIdx.x == 0) {
            value = shared_memory[0] + shared_memory[1];
            out[0] = value;
            assert(value == 7);
        }
    }
}

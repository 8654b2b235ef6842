// The single-pass reduction of the CUDA C++ Programming Guide ("Memory Fence Functions": sum(),
// with its `__device__ unsigned int count` and `__shared__ bool isLastBlockDone`), the step that
// cuda-samples' threadFenceReduction and CUB-style last-block reductions share: each block stores
// its partial result, fences, and takes a ticket with atomicInc; the block that draws the last
// ticket adds the partials and resets the counter for the next launch (`count = 0`).
// Kept from the guide: the fence, atomicInc(&count, gridDim.x), the last-block test and the reset.
// Changed: a __threadfence() in the last block after it sees it is last (the acquire side the
// guide leaves to the hardware; last-block-reset.cu is the guide's form), one thread per block (calculatePartialSum/TotalSum become one value per block) and
// unsigned data instead of float.
//
// ptxmm: launch sum<<<2, 1>>>(unsigned in[2] = {3, 4}, unsigned result[2])
// ptxmm: expect ok
// ptxmm: forall result[0] == 7
//
// Why no race on count (PTX ISA 8.7.1): atomicInc is ONE memory operation (atom.inc). The first
// block's atom is observed by the last block's atom (8.9.2), which is before the reset
// `count = 0` in program order: the two are ordered by causality order. The first block's read
// half is part of that same operation — not a separate access that could race with the reset.
// Why result[0] == 7: the last block's atom observes the other block's atom; the writer's
// __threadfence() before its atom and the last block's __threadfence() after its own make a
// release and an acquire pattern (8.8) that synchronize (8.9.4): the partial store is
// causality-ordered before the last block's read of it.
#include <cassert>

__device__ unsigned int count = 0;

__global__ void sum(const unsigned *in, volatile unsigned *result)
{
    __shared__ bool isLastBlockDone;
    unsigned partialSum = in[blockIdx.x];
    if (threadIdx.x == 0) {
        result[blockIdx.x] = partialSum;
        __threadfence();
        unsigned int value = atomicInc(&count, gridDim.x);
        isLastBlockDone = (value == (gridDim.x - 1));
    }
    __syncthreads();
    if (isLastBlockDone) {
        __threadfence();
        if (threadIdx.x == 0) {
            unsigned totalSum = result[0] + result[1];
            assert(totalSum == in[0] + in[1]);
            result[0] = totalSum;
            count = 0;
        }
    }
}

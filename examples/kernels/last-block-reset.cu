// The single-pass reduction of the CUDA C++ Programming Guide ("Memory Fence Functions": sum(),
// with its `__device__ unsigned int count` and `__shared__ bool isLastBlockDone`), the step that
// cuda-samples' threadFenceReduction and CUB-style last-block reductions share: each block stores
// its partial result, fences, and takes a ticket with atomicInc; the block that draws the last
// ticket adds the partials and resets the counter for the next launch (`count = 0`).
// Kept from the guide: the fence, atomicInc(&count, gridDim.x), the last-block test and the reset.
// Changed: one thread per block (calculatePartialSum/TotalSum become one value per block) and
// unsigned data instead of float.
//
// ptxmm: launch sum<<<2, 1>>>(unsigned in[2] = {3, 4}, unsigned result[2])
// ptxmm: expect assert-fails
// ptxmm: exists result[0] != 7
//
// Why no race on count (PTX ISA 8.7.1): atomicInc is ONE memory operation (atom.inc). The first
// block's atom is observed by the last block's atom (8.9.2), which is before the reset
// `count = 0` in program order: the two are ordered by causality order. The first block's read
// half is part of that same operation — not a separate access that could race with the reset.
// Why result[0] may still miss a partial (the condition holds: a stale sum is allowed): the
// writer fences, but the last block reads the partials with nothing after its relaxed atomicInc
// that acquires (no fence, no acquire load): the release pattern (fence; atom) has no matching
// acquire pattern (8.9.4), so the partial store is not causality-ordered before the read. The
// guide's code relies on the hardware here, and the assert can fail;
// last-block-reset-fenced.cu adds the fence.
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
        if (threadIdx.x == 0) {
            unsigned totalSum = result[0] + result[1];
            assert(totalSum == in[0] + in[1]);
            result[0] = totalSum;
            count = 0;
        }
    }
}

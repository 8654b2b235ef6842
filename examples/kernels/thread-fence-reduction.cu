// cuda-samples' threadFenceReduction (reduceSinglePass), its skeleton at 2 blocks of 2 threads:
// each block sums its inputs in shared memory and stores the partial sum, every thread
// __threadfence()s, thread 0 takes a ticket with atomicInc(&retirementCount, gridDim.x), and the
// block that draws the last ticket sums the partial sums and resets the counter. Float data, as
// in the sample. Correct.
// Kept from the sample: float partial sums in shared memory, the __threadfence() before the
// ticket, atomicInc, the last-block test through a __shared__ bool, the reset. Changed: one input
// per thread (the grid-stride loop and reduceBlock's tree become sdata[0] + sdata[1]), and one
// __threadfence() in the last block after it learns it is last, which the sample does not have.
//
// ptxmm: launch reduceSinglePass<<<2, 2>>>(float in[4] = {0.1, 0.2, 0.3, 0.4}, float out[2])
// ptxmm: expect ok
// ptxmm: forall out[0] == 0f3F800000
//
// Why out[0] is exactly 1.0f (and the assert holds): each block's partial sum is ONE add.f32 (round to nearest even,
// PTX ISA 9.7.3.3): 0.1f + 0.2f = 0x3E99999A, 0.3f + 0.4f = 0x3F333334, and their sum rounds to
// 0x3F800000; ptxmm evaluates every add bit-exactly (ir/floats.py), so any other order of
// additions or a stale partial would show as another bit pattern.
// Why the last block sees both partial sums (8.9.4): the writer's store, then its
// __threadfence() (fence.sc.gpu) and its atom make a release pattern; the last block's atom
// observes that atom (8.9.2), and the last block's own __threadfence() after the __syncthreads()
// that publishes amLast completes the acquire pattern: the partial store is causality-ordered
// before the read (thread 0 takes the ticket; the bar.sync orders its atom before the other
// threads' fences). Without that second fence (the sample as published) nothing acquires: the
// partial store and its read race, and the sum may miss a partial — tests/kernel/
// test_float_kernels.py checks that variant too.
// Why no race on retirementCount: atomicInc is one memory operation (atom.inc), observed by the
// last block's atom, which is before the reset in program order (causality order).
// Litmus twin: none.
#include <cassert>

__device__ unsigned int retirementCount = 0;

__global__ void reduceSinglePass(const float *g_idata, float *g_odata)
{
    __shared__ float sdata[2];
    __shared__ bool amLast;
    const unsigned int tid = threadIdx.x;

    // PHASE 1: this block's inputs, reduced in shared memory
    sdata[tid] = g_idata[blockIdx.x * 2 + tid];
    __syncthreads();
    if (tid == 0) {
        g_odata[blockIdx.x] = sdata[0] + sdata[1];
    }

    // PHASE 2: the last block to finish sums the partial sums
    __threadfence();
    if (tid == 0) {
        unsigned int ticket = atomicInc(&retirementCount, gridDim.x);
        amLast = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (amLast) {
        __threadfence();
        sdata[tid] = tid < gridDim.x ? g_odata[tid] : 0.0f;
        __syncthreads();
        if (tid == 0) {
            const float total = sdata[0] + sdata[1];
            g_odata[0] = total;
            retirementCount = 0;
            assert(total == 1.0f);
        }
    }
}

// A one-slot mbarrier hand-off of two items with the producer's wait on `empty` left out: it
// refills the slot before the consumer is done with it. explain --fix derives the wait that is
// missing from the kernel (the arrivals on `empty`, its init count) and checks it
// (tests/explanation/test_wait_fix.py). mbar_handoff_loop.cu: the same with the producer's loop
// kept by nvcc, where no one inserted instruction can name every pass's parity.
// ptxmm: launch handoff<<<1, 2>>>(int in[2] = {5, 6}, int out[2])
// ptxmm: expect race, assert-fails, hang
// ptxmm: exists out[0] != 5
#include <cassert>
#include <cstdint>

__device__ static inline uint32_t smem(uint64_t *bar)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(bar));
}

__device__ static inline void init(uint64_t *bar, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(bar)), "r"(count));
}

__device__ static inline void arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem(bar)) : "memory");
}

__device__ static inline void wait(uint64_t *bar, int parity)
{
    asm volatile("{\n"
                 ".reg .pred P1;\n"
                 "LAB_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
                 "@P1 bra.uni DONE;\n"
                 "bra.uni LAB_WAIT;\n"
                 "DONE:\n"
                 "}\n" ::"r"(smem(bar)), "r"(parity) : "memory");
}

__global__ void handoff(const int *in, int *out)
{
    __shared__ uint64_t full, empty;
    __shared__ int slot;
    if (threadIdx.x == 0) {
        init(&full, 1);
        init(&empty, 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int i = 0; i < 2; i++) {
            slot = in[i];
            arrive(&full);
        }
    } else {
        for (int i = 0; i < 2; i++) {
            wait(&full, i & 1);
            int v = slot;
            arrive(&empty);
            out[i] = v;
            assert(v == in[i]);
        }
    }
}

// BROKEN TWIN (one line dropped): cutlass-semaphore.cu with release()'s leading __syncthreads()
// removed — thread 0 publishes the flag without waiting for the other threads' C stores. Otherwise
// CUTLASS's split-K serial semaphore exactly as cutlass::Semaphore writes it — including wait()'s
// __syncthreads_and loop (the simplified ../splitk-semaphore.cu spins in thread 0 instead).
// Source: github:NVIDIA/cutlass (commit 7107b055, 2026-08-20), include/cutlass/semaphore.h,
//   class Semaphore: fetch, wait, release (quoted in the code below; the sm_70+ branches);
//   used by include/cutlass/gemm/kernel/gemm.h (kSplitKSerial: semaphore.fetch();
//   semaphore.wait(threadblock_tile_offset.k()); ... epilogue ...; semaphore.release(lock)).
// Cut: the GEMM (partition k's partial is k + 1 per element, the epilogue reads C and writes D in
// place as split-K serial does), 2 partitions x 2 threads.
//
// ptxmm: launch splitk<<<2, 2>>>(int lock[1], int C[2])
// ptxmm: expect race, assert-fails
// ptxmm: exists C[1] != 3
//
// Why a race (PTX ISA 8.9): thread 1 of partition 0 stores C[1] (weak) with no barrier before
// thread 0's st.release: the release orders only thread 0's own earlier accesses (and those that
// reach it through a synchronizes-with — the dropped bar.sync was that). Partition 1's thread 1
// loads C[1] (weak) after the acquire and the barriers of its own CTA, but partition 0's thread 1
// store is not before it in causality order: a data race. (C[0] is still ordered: thread 0 itself
// releases it.)
// Why the assertion can fail: partition 1's thread 1 may read 0 and write 2.
#include <cassert>

class Semaphore {
public:
    int *lock;
    bool wait_thread;
    int state;

    __device__ Semaphore(int *lock_, int thread_id) : lock(lock_), wait_thread(thread_id < 0 || thread_id == 0), state(-1) {}

    __device__ void fetch()
    {
        if (wait_thread) {
            asm volatile("ld.global.acquire.gpu.b32 %0, [%1];\n" : "=r"(state) : "l"(lock));
        }
    }

    __device__ void wait(int status = 0)
    {
        while (__syncthreads_and(state != status)) {
            fetch();
        }
        __syncthreads();
    }

    __device__ void release(int status = 0)
    {
        // __syncthreads();   <- dropped
        if (wait_thread) {
            asm volatile("st.global.release.gpu.b32 [%0], %1;\n" : : "l"(lock), "r"(status));
        }
    }
};

__global__ void splitk(int *lock, int *C)
{
    const int k = blockIdx.x;
    const int t = threadIdx.x;
    Semaphore semaphore(lock, t);
    semaphore.fetch();
    semaphore.wait(k);
    int c = (k == 0) ? (k + 1) : C[t] + (k + 1);      // the epilogue: D = C + partial
    C[t] = c;
    int lock_value = (k == int(gridDim.x) - 1) ? 0 : k + 1;
    semaphore.release(lock_value);
    if (k == int(gridDim.x) - 1) {
        assert(c == 3);
    }
}

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
// ptxmm: expect ok
// ptxmm: forall C[0] == 3 && C[1] == 3
//
// Why no race (PTX ISA 8.9): partition 0's threads store C[t] (weak); release() runs
// __syncthreads() (bar.sync: every thread's arrive synchronizes with thread 0's wait) and thread
// 0's st.global.release.gpu (a release). Partition 1's thread 0 fetches with
// ld.global.acquire.gpu (an acquire) inside the __syncthreads_and loop (bar.red.and: a CTA
// barrier, its arrive synchronizes with every thread's wait), which hands the order to thread 1.
// The release and the acquire are morally strong (.gpu) and the acquire reads the release: the
// weak C[t] store of partition 0 is before partition 1's weak C[t] load in causality order.
// Why the assertion holds: coherence: 1, then 1 + 2 = 3. The loop ends: partition 0 releases 1
// without waiting (its wait(0) sees state -1 != 0 first, then fetches 0).
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
        __syncthreads();
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

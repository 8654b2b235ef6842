// CUTLASS's split-K serial reduction semaphore (cutlass/semaphore.h): two K-partitions, two
// threads each, add their partial sums into one output tile in partition order. Correct.
//
// ptxmm: launch splitk<<<2, 2>>>(int lock[1], int C[2])
// ptxmm: expect ok
// ptxmm: forall C[0] == 3 && C[1] == 3
//
// Block k (partition k) computes a partial sum k + 1 for each of the tile's two elements (thread
// t owns C[t]). Partition 0 writes C directly; partition k > 0 first waits on the semaphore:
// thread 0 spins on `ld.global.acquire.gpu.b32` (CUTLASS's inline asm) until lock == k, then
// __syncthreads(); every thread reads C[t], adds its partial and writes C[t]; then
// __syncthreads() and thread 0 releases the semaphore with `st.global.release.gpu.b32`: lock = k + 1,
// or 0 after the last partition (so the semaphore is reusable). The last partition asserts its
// element is the full sum 1 + 2 = 3.
//
// Why no race (PTX ISA memory model): C[t] is written by thread t of block 0 and read and
// written by thread t of block 1. Causality order runs: block 0 thread t's C store -> bar.sync
// (the __syncthreads before the release; a CTA barrier's arrive synchronizes with the wait of
// the same barrier instance, "Synchronizes-with") -> block 0 thread 0's st.release (a release
// pattern) -> block 1 thread 0's ld.acquire that reads lock == 1 (an acquire pattern; both
// strong, .gpu, morally strong: they synchronize) -> bar.sync in block 1 -> block 1 thread t's C
// load. Base causality order is transitive, so thread 1 of block 0 reaches thread 1 of block 1
// although neither of them touches the semaphore: this is cumulativity. The lock accesses are
// strong, device scope, morally strong.
// Why the assertion holds: coherence makes block 1's load read block 0's store (1), so it writes 3.
// The spin ends in every fair execution: partition 0 releases lock = 1 without waiting.
#include <cassert>

__device__ int load_acquire(const int *ptr)
{
    int state;
    asm volatile("ld.global.acquire.gpu.b32 %0, [%1];\n" : "=r"(state) : "l"(ptr) : "memory");
    return state;
}

__device__ void store_release(int *ptr, int status)
{
    asm volatile("st.global.release.gpu.b32 [%0], %1;\n" : : "l"(ptr), "r"(status) : "memory");
}

__global__ void splitk(int *lock, int *C)
{
    const int k = blockIdx.x;
    const int t = threadIdx.x;
    const int partial = k + 1;
    const bool last = k == int(gridDim.x) - 1;

    if (k != 0) {                        // semaphore.wait(k)
        if (t == 0) {
            while (load_acquire(lock) != k) {
            }
        }
        __syncthreads();
    }
    int c = (k == 0) ? partial : C[t] + partial;
    C[t] = c;
    __syncthreads();                     // semaphore.release(last ? 0 : k + 1)
    if (t == 0) {
        store_release(lock, last ? 0 : k + 1);
    }
    if (last) {
        assert(c == int(gridDim.x) * (int(gridDim.x) + 1) / 2);
    }
}

// CUTLASS's split-K serial semaphore as cutlass/semaphore.h writes its wait: thread 0 fetches the
// lock, and the whole block loops on __syncthreads_and(state != status) (bar.red.and.pred), so
// that every thread learns together whether thread 0 saw its turn. Two K-partitions, two threads
// each, add their partial sums into one output tile in partition order. Correct.
//
// ptxmm: launch splitk<<<2, 2>>>(int lock[1], int C[2])
// ptxmm: expect ok
// ptxmm: forall C[0] == 3 && C[1] == 3
//
// Block k computes a partial sum k + 1 for each of the tile's two elements (thread t owns C[t]).
// Partition 0 writes C directly; partition k > 0 waits: every thread starts with state = -1,
// thread 0 (the wait thread) loads the lock with `ld.global.acquire.gpu.b32` (fetch), and the
// block repeats "__syncthreads_and(state != k), then fetch" until the reduction is false, i.e.
// until thread 0's state is k; then __syncthreads(). Every thread reads C[t], adds its partial and
// writes C[t]; then __syncthreads() and thread 0 releases the semaphore with
// `st.global.release.gpu.b32`: lock = k + 1 (0 after the last partition). The last partition
// asserts its element is the full sum 1 + 2 = 3. The same kernel with a plain spin of thread 0 is
// splitk-semaphore.cu.
//
// Why no race (PTX ISA memory model): bar.red is a CTA barrier that, like bar.sync, makes each
// thread's prior memory accesses performed relative to all threads participating in it (PTX ISA,
// bar/barrier). Causality order runs: block 0 thread t's C store -> bar.sync -> block 0 thread
// 0's st.release -> block 1 thread 0's ld.acquire that reads lock == 1 (release and acquire
// patterns, morally strong: they synchronize) -> the bar.red whose reduction says "stop" (its
// arrive in thread 0 synchronizes with the wait of every thread of block 1) -> block 1 thread
// t's C load. Thread 1 of block 1 never touches the lock: the barrier carries thread 0's
// acquire to it (cumulativity).
// Why the assertion holds: coherence makes block 1's load read block 0's store (1), so it writes 3.
// The loop ends in every fair execution: partition 0 releases lock = 1 without waiting.
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
    const bool wait_thread = t == 0;

    if (k != 0) {                        // Semaphore::fetch(), then Semaphore::wait(k)
        int state = -1;
        if (wait_thread) {
            state = load_acquire(lock);
        }
        while (__syncthreads_and(state != k)) {
            if (wait_thread) {
                state = load_acquire(lock);
            }
        }
        __syncthreads();
    }
    int c = (k == 0) ? partial : C[t] + partial;
    C[t] = c;
    __syncthreads();                     // Semaphore::release(last ? 0 : k + 1)
    if (wait_thread) {
        store_release(lock, last ? 0 : k + 1);
    }
    if (last) {
        assert(c == int(gridDim.x) * (int(gridDim.x) + 1) / 2);
    }
}

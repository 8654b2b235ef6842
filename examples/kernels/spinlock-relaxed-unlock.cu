// A CAS spin lock whose unlock is a RELAXED store: broken.
//
// ptxmm: launch locked_increment<<<2, 1>>>(int lock[1], int count[1], int done[1])
// ptxmm: expect race, assert-fails
// ptxmm: exists count[0] == 1
//
// As spinlock-cas.cu, but the lock is given back with a relaxed store (st.relaxed.gpu).
//
// Why a race (PTX ISA memory model): the second thread's acquire CAS reads the first thread's
// unlock store, and the two are morally strong, but a relaxed store is not a release operation
// and no release fence precedes it: the first thread has no release pattern, so no
// synchronization, and the critical sections' weak count[0] accesses are not ordered by
// causality. They race.
// Why the assertion can fail: the second section may read the stale 0 and store 1; the done
// counter (acq_rel) makes the assertion's load see that final 1.
// Litmus twin: examples/teaching/06-relaxed-store-is-not-release.ptx is the same missing release
// in message-passing form; no litmus test of this exact lock exists.
#include <cassert>
#include <cuda/atomic>

using device_int = cuda::atomic_ref<int, cuda::thread_scope_device>;

__global__ void locked_increment(int *lock, int *count, int *done)
{
    device_int l(lock[0]);
    int expected = 0;
    while (!l.compare_exchange_weak(expected, 1, cuda::std::memory_order_acquire,
                                    cuda::std::memory_order_relaxed)) {
        expected = 0;
    }
    count[0] = count[0] + 1;
    l.store(0, cuda::std::memory_order_relaxed);

    device_int d(done[0]);
    if (d.fetch_add(1, cuda::std::memory_order_acq_rel) == 1) {
        assert(count[0] == 2);
    }
}

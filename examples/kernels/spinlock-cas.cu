// A CAS spin lock between two blocks: acquire CAS to lock, release store to unlock. Correct.
//
// ptxmm: launch locked_increment<<<2, 1>>>(int lock[1], int count[1], int done[1])
// ptxmm: expect ok
// ptxmm: forall count[0] == 2
//
// Each block's thread takes the lock with a device-scope compare-exchange whose success order is
// acquire (atom.acquire.gpu.cas; retried until it finds 0), increments the plain counter
// count[0] (weak load and weak store), and gives the lock back with a release store
// (st.release.gpu). It then counts itself done with an acq_rel fetch_add on done[0]
// (atom.acq_rel.gpu.add); the thread that finishes second asserts count[0] == 2.
//
// Why no race (PTX ISA memory model): the lock word is only accessed by strong device-scope
// operations, which are morally strong with each other. Whichever thread takes the lock second
// has its CAS read 0 from the other thread's unlock store (the initial 0 was consumed by the
// first CAS, and atomicity of the RMW forbids two CASes reading it): the unlock is a release
// pattern, the CAS an acquire pattern, morally strong and in observation order, so they
// synchronize. Base causality order thus runs from the first critical section's weak accesses
// to the second's: the count[0] accesses are ordered, no data race.
// Why the assertion holds: by coherence the second critical section's load reads the first's
// store (1) and stores 2, the coherence-last write of count[0]. The second thread on done[0]
// reads (rmw, morally strong) the first one's acq_rel add: release pattern and acquire pattern,
// so everything the first thread did precedes the assertion's load in causality order, as does
// everything the asserting thread did itself; coherence makes the load read 2.
// The spin loop ends in every fair execution: the lock is free again after each unlock.
// Litmus twins: examples/spinlock-cas.ptx and examples/teaching/14-lock-acquire-release.ptx
// (count == 2 required).
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
    l.store(0, cuda::std::memory_order_release);

    device_int d(done[0]);
    if (d.fetch_add(1, cuda::std::memory_order_acq_rel) == 1) {
        assert(count[0] == 2);
    }
}

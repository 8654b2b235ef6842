// A CAS spin lock whose lock-taking compare-exchange is RELAXED: broken.
//
// ptxmm: launch locked_increment<<<2, 1>>>(int lock[1], int count[1], int done[1])
// ptxmm: expect race, assert-fails
// ptxmm: exists count[0] == 1
//
// As spinlock-cas.cu, but the CAS that takes the lock is relaxed (atom.relaxed.gpu.cas); the
// unlock is still a release store, the done counter still acq_rel.
//
// Why a race (PTX ISA memory model): the unlock's st.release is a release pattern, but the
// second thread's CAS that reads it is neither an acquire operation nor followed by an acquire
// fence, so there is no acquire pattern and no synchronization between the critical sections.
// Atomicity still gives mutual exclusion on the lock word (morally strong RMWs), but nothing puts
// the first critical section's weak count[0] store before the second's weak load in causality
// order: the two conflicting weak accesses race.
// Why the assertion can fail: the second critical section may read the initial 0 (the first
// section's store is not ordered before it), so both store 1 and count[0] ends at 1. The done
// counter orders both sections before the assertion's load, which then reads the final 1.
// Litmus twin: examples/teaching/13-work-queue-atom-relaxed.ptx is the closest shape (a relaxed
// RMW does not acquire); no litmus test of this exact lock exists.
#include <cassert>
#include <cuda/atomic>

using device_int = cuda::atomic_ref<int, cuda::thread_scope_device>;

__global__ void locked_increment(int *lock, int *count, int *done)
{
    device_int l(lock[0]);
    int expected = 0;
    while (!l.compare_exchange_weak(expected, 1, cuda::std::memory_order_relaxed,
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

// A ticket lock between two blocks: legacy atomicAdd draws a ticket, an acquire spin waits for
// it to be served, a release store serves the next ticket. Correct.
//
// ptxmm: launch ticket<<<2, 1>>>(unsigned next[1], unsigned serving[1], int count[1], int done[1])
// ptxmm: expect ok
// ptxmm: forall count[0] == 2
//
// Each thread draws my = atomicAdd(&next[0], 1) (atom.global.add.u32: relaxed, device scope),
// spins until serving[0] == my with an acquire load (ld.acquire.gpu), increments the weak counter
// count[0], and serves the next ticket with serving[0] = my + 1 as a release store
// (st.release.gpu). An acq_rel fetch_add on done[0] tells the thread that finishes second to
// assert count[0] == 2.
//
// Why no race (PTX ISA memory model): the tickets are distinct (the two atomicAdds are morally
// strong RMWs on next[0], so one reads the other's write: atomicity), say 0 and 1. The holder of
// ticket 1 leaves its spin only on reading serving[0] == 1, which only the holder of ticket 0
// writes, after its critical section, with a release store: release pattern -> (morally strong
// rf: obs) -> acquire pattern, hence synchronization, and causality order puts the first
// section's weak count[0] accesses before the second's. No conflicting pair is unordered.
// Why the assertion holds: coherence makes the second section read 1 and write 2 (the
// coherence-last write); the acq_rel done counter orders both sections before the asserting
// load, which reads 2.
// The spin ends in every fair execution: the holder of ticket 0 finds serving[0] == 0 at once.
// Litmus twin: none in examples/ (examples/teaching/05-release-acquire-ops.ptx is the hand-off).
#include <cassert>
#include <cuda/atomic>

__global__ void ticket(unsigned *next, unsigned *serving, int *count, int *done)
{
    unsigned my = atomicAdd(&next[0], 1u);
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> s(serving[0]);
    while (s.load(cuda::std::memory_order_acquire) != my) {
    }
    count[0] = count[0] + 1;
    s.store(my + 1, cuda::std::memory_order_release);

    cuda::atomic_ref<int, cuda::thread_scope_device> d(done[0]);
    if (d.fetch_add(1, cuda::std::memory_order_acq_rel) == 1) {
        assert(count[0] == 2);
    }
}

// Message passing between two blocks with BLOCK-scope release/acquire atomics: broken.
//
// ptxmm: launch mp<<<2, 1>>>(int data[1], int flag[1], int out[1])
// ptxmm: expect race, assert-fails, hang
// ptxmm: exists out[0] == 0
//
// Same as mp-release-flag.cu except that the atomic_ref has cuda::thread_scope_block, so nvcc
// emits st.release.cta / ld.acquire.cta. The two threads are in different CTAs.
//
// Why a race (PTX ISA, "Scope" and "Morally strong operations"): two strong operations are
// morally strong only if each one's scope includes the other's thread. A .cta scope contains
// only the threads of the issuing CTA, so the release store (block 0) and the acquire load
// (block 1) are not morally strong. Synchronization requires the release pattern to be morally
// strong with the acquire pattern and the write to be observed through morally strong rf, so
// there is no synchronization and no causality order from block 0 to block 1. Both pairs of
// conflicting accesses race: the weak data[0] store/load, and the flag[0] store/load themselves
// (strong but not morally strong).
// Why the assertion can fail: with no causality order, block 1 may read flag[0] == 1 and still
// read the initial data[0] == 0.
// It may also hang (docs/liveness.md, scoped memory fairness): the .cta load need never see block 0's store; the H100 hangs on it.
// Litmus twin: examples/teaching/15-scope-too-narrow.ptx (stale data allowed).
#include <cassert>
#include <cuda/atomic>

__global__ void mp(int *data, int *flag, int *out)
{
    cuda::atomic_ref<int, cuda::thread_scope_block> f(flag[0]);
    if (blockIdx.x == 0) {
        data[0] = 42;
        f.store(1, cuda::std::memory_order_release);
    } else {
        while (f.load(cuda::std::memory_order_acquire) != 1) {
        }
        int d = data[0];
        out[0] = d;
        assert(d == 42);
    }
}

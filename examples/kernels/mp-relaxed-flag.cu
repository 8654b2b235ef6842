// Message passing between two blocks whose flag is published with a RELAXED store.
//
// ptxmm: launch mp<<<2, 1>>>(int data[1], int flag[1], int out[1])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[0] == 0
//
// Block 0 writes data[0] = 42 with a plain (weak) store, then sets flag[0] = 1 with a relaxed
// device-scope store (libcu++: st.relaxed.gpu). Block 1 spins on flag[0] with an acquire load
// (ld.acquire.gpu) and then reads data[0] with a plain load.
//
// Why a race (PTX ISA, memory consistency model, "Data races" / "Morally strong operations"):
// the two accesses to data[0] conflict (same location, one a write) and are both weak, so they
// are not morally strong; they race unless causality order relates them. Causality order from
// block 0 to block 1 needs synchronization: a release pattern in block 0 observed by an acquire
// pattern in block 1 ("Release and acquire patterns"). The acquire side is there (ld.acquire),
// but a relaxed store is not a release operation and no release fence precedes it, so block 0
// has no release pattern: nothing orders data[0] = 42 before block 1's load. The flag accesses
// themselves are strong, device scope, and each scope contains the other thread: they are
// morally strong and do not race.
// Why the assertion can fail: the load of data[0] is not ordered after the store by causality,
// so coherence and causality allow it to read the initial 0 even after flag[0] == 1 was seen.
// Litmus twin: examples/mp-relaxed-acquire.ptx (the stale read is allowed).
#include <cassert>
#include <cuda/atomic>

__global__ void mp(int *data, int *flag, int *out)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[0]);
    if (blockIdx.x == 0) {
        data[0] = 42;
        f.store(1, cuda::std::memory_order_relaxed);
    } else {
        while (f.load(cuda::std::memory_order_acquire) != 1) {
        }
        int d = data[0];
        out[0] = d;
        assert(d == 42);
    }
}

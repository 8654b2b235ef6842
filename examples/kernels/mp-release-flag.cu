// Message passing between two blocks with a release store and an acquire spin: correct.
//
// ptxmm: launch mp<<<2, 1>>>(int data[1], int flag[1], int out[1])
// ptxmm: expect ok
// ptxmm: forall out[0] == 42
//
// Block 0 writes data[0] = 42 (weak store) and then flag[0] = 1 with a device-scope release
// store (st.release.gpu). Block 1 spins on flag[0] with a device-scope acquire load
// (ld.acquire.gpu) until it reads 1, then reads data[0] (weak load).
//
// Why no race and why the assertion holds (PTX ISA memory model): the release store is a
// release pattern on flag[0] and the acquire load that reads 1 is an acquire pattern on flag[0];
// both are strong with scope .gpu, which contains both threads, so they are morally strong and
// the acquire load observes the release store (rf between morally strong operations is in
// observation order). Hence the release pattern synchronizes with the acquire pattern, and base
// causality order runs data[0] = 42 -> po -> st.release -> sync -> ld.acquire -> po -> ld data[0].
// The two data[0] accesses are therefore ordered by causality: no data race. Coherence
// ("Coherence" axiom: a read may not read a write that precedes, in causality order, another
// write to the same location that precedes the read) then forbids the read from returning the
// initial 0, which is co-before 42: the load returns 42.
// The spin loop ends in every fair execution: the flag's last write is 1.
// Litmus twins: examples/mp-spin.ptx (stale data forbidden), examples/mp-release-acquire.ptx.
#include <cassert>
#include <cuda/atomic>

__global__ void mp(int *data, int *flag, int *out)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[0]);
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

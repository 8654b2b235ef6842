// A histogram: each thread reads a value and increments its bin with atomicAdd — the bin's
// address is computed from the loaded value. Correct.
//
// ptxmm: launch histogram<<<1, 4>>>(int in[4] = {0, 2, 2, 3}, unsigned hist[4])
// ptxmm: expect ok
// ptxmm: forall hist[0] == 1 && hist[1] == 0 && hist[2] == 2 && hist[3] == 1
//
// Thread t loads in[t] (nothing writes `in`: every load reads its initial value) and, when it is a
// bin number (0 <= b < 4), increments hist[b] with atomicAdd (atom.global.add, relaxed, .gpu
// scope). ptxmm does not know the loaded value when it builds the events: the address
// hist + 4 * b is a case split over every element it may name — the bounds test `b < 4` leaves
// hist[0..3] — each case assuming the address equals that element's.
// Why no race (PTX ISA memory model): the only conflicting accesses are the atomicAdds on the
// same bin, which are atomic operations of the same (.gpu) scope: morally strong.
// Why the condition and the assertion hold: the two increments of hist[2] are read-modify-writes
// of one location, so by atomicity neither is lost, and each returns the count before it (0 or 1).
// Litmus twin: none.

#include <cassert>

__global__ void histogram(const int *in, unsigned *hist)
{
    int b = in[threadIdx.x];
    if (b >= 0 && b < 4) {
        unsigned before = atomicAdd(&hist[b], 1u);
        assert(before < 2);
    }
}

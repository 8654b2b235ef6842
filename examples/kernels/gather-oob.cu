// A gather whose index is loaded and not checked: one index is past the end. Broken.
//
// ptxmm: launch gather<<<1, 2>>>(int idx[2] = {1, 4}, int in[4] = {10, 11, 12, 13}, int out[2])
// ptxmm: expect out-of-bounds
// ptxmm: forall out[0] == 11
//
// Thread t loads i = idx[t] and copies in[i] to out[t]. The address in + 4 * i is computed from
// the loaded value, which ptxmm does not bound (any 32-bit value): a case split over every element
// of every buffer the address may name, and one case "outside every buffer". Thread 1 loads 4:
// in + 16 is past in's last element, so the case that stops out of bounds is the one its
// execution takes (an `out-of-bounds` finding at line 22); thread 0 loads 1 and copies 11.
// Why the assertion holds: every element of in is at least 10 (a read past the end stops first).
// Why the condition holds: thread 0 copies in[1] = 11.
// No race: the buffers written (out[0], out[1]) are written by one thread each and read by none.
// Litmus twin: none.

#include <cassert>

__global__ void gather(const int *idx, const int *in, int *out)
{
    int i = idx[threadIdx.x];
    int v = in[i];
    assert(v >= 10);
    out[threadIdx.x] = v;
}

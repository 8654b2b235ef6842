// The index of a store is loaded from a buffer that another block writes with a plain store. Broken.
//
// ptxmm: launch scatter<<<2, 1>>>(int idx[1], int out[2])
// ptxmm: expect race
// ptxmm: forall out[0] == 0 || out[1] == 5
//
// Block 0 stores out[1] = 5 and then idx[0] = 1, both plain. Block 1 loads i = idx[0] (0 or 1: the
// initial value or block 0's store), asserts that it is an index of out, and stores out[i] = 7 —
// the address out + 4 * i is computed from the loaded value: a case split over out[0] and out[1]
// (after the assertion, the only values left).
// Why a race (PTX ISA memory model): idx[0] is written by block 0 and read by block 1 with weak
// operations, not morally strong, and nothing orders them in causality order; when block 1 reads
// 1, its store to out[1] conflicts with block 0's store to out[1] — weak, unordered (a plain
// read of idx[0] that reads block 0's store is no acquire pattern).
// Why the assertion holds: idx[0] only ever holds 0 (initial) or 1 (block 0's store).
// Why the condition holds: block 1 writes one element; if it is out[0], out[1] keeps 5.
// Litmus twin: none.

#include <cassert>

__global__ void scatter(int *idx, int *out)
{
    if (blockIdx.x == 0) {
        out[1] = 5;
        idx[0] = 1;
    } else {
        int i = idx[0];
        assert(i == 0 || i == 1);
        out[i] = 7;
    }
}

// One thread writes a datum, the other reads it with nothing between them: no flag, no barrier.
// No strengthening, fence, split or bound check orders the two accesses: what is missing is a
// wait, which explain --fix names but does not invent (tests/explanation/test_fix_edits.py).
// ptxmm: launch k<<<1, 2>>>(int data[1], int out[1])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[0] != 42
#include <cassert>

__global__ void k(int *data, int *out)
{
    if (threadIdx.x == 0) {
        data[0] = 42;
    } else {
        int d = data[0];
        out[0] = d;
        assert(d == 42);
    }
}

// A consumer spins on a PLAIN load of the flag; nvcc -O3 hoists the load out of the loop. Broken.
//
// ptxmm: launch mp<<<2, 1>>>(int data[1], int flag[1], int out[1])
// ptxmm: expect race, assert-fails, hang
// ptxmm: exists out[0] == 0
//
// Block 0 writes data[0] = 42 and then flag[0] = 1, both with plain stores. Block 1 runs
// `while (flag[0] == 0) {}` on a plain int*: a plain load is not volatile and not atomic, so the
// compiler may assume no other thread changes flag[0] during the loop. nvcc -O3 loads flag[0]
// ONCE (ld.global.u32 before the loop) and, when the value read is 0, jumps to
// `$L__BB0_4: bra.uni $L__BB0_4;` (see spin-hoisted.ptx: the loop has no load at all).
//
// Why a hang (the expected finding the liveness check adds): an execution where block 1's single
// load of flag[0] reads the initial 0 is allowed (nothing orders block 0's store before it), and
// then block 1 loops forever without reading memory again; no fair schedule of block 0 can get it
// out.
// Why a race (PTX ISA memory model): flag[0] and data[0] are each written by block 0 and read by
// block 1 with weak operations (not morally strong), and no release/acquire pattern or barrier
// orders them in causality order.
// Why the assertion can fail: if the single flag load reads 1, the weak data load is still not
// ordered after the weak data store, so it may read the initial 0.
// Litmus twin: none with the hoisted load (examples/teaching/01-mp-plain.ptx is the racy message
// passing without the loop).
#include <cassert>

__global__ void mp(int *data, int *flag, int *out)
{
    if (blockIdx.x == 0) {
        data[0] = 42;
        flag[0] = 1;
    } else {
        while (flag[0] == 0) {
        }
        int d = data[0];
        out[0] = d;
        assert(d == 42);
    }
}

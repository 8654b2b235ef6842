// CUB's decoupled look-back with its packed tile status: each tile descriptor {status, value} is
// published with ONE strong vector store and polled with ONE strong vector load, as CUB's
// ScanTileState does (store_relaxed/load_relaxed: `st.relaxed.gpu.v2.u32` / `ld.relaxed.gpu.v2.u32`
// on a uint2, written here as CUB writes them, in inline asm). 2 tiles. The PTX memory model lets
// the reader see a new status beside an old value: the assertion can fail.
//
// ptxmm: launch scan<<<2, 1>>>(int in[2] = {1, 2}, unsigned desc[4], int out[2])
// ptxmm: expect assert-fails
// ptxmm: exists out[1] != 3
//
// Block b owns tile b, whose descriptor is desc[2b] (status: X = 0 nothing yet, A = 1 aggregate,
// P = 2 inclusive prefix) and desc[2b + 1] (the value). Tile 0 publishes {P, in[0]}; tile 1
// publishes {A, in[1]}, spins on tile 0's descriptor until its status is not X, adds its value,
// publishes {P, prefix} and asserts prefix == in[0] + in[1].
// Why the assert can fail: PTX ISA 8.2.4 (memory operations on vector data types) models a vector
// access "as a set of equivalent memory operations with a scalar data type, executed in an
// unspecified order on the elements in the vector". The store is two relaxed.gpu stores, the
// load two relaxed.gpu loads, each element single-copy atomic on its own (8.10.3 Atomicity
// concerns one location). Nothing orders the value's store before the status's for the reader:
// no release or acquire pattern (8.8) relates them, and the reader may take the status from the
// store and the value from the initial write — P beside 0 (out[1] == 2). CUB relies on the
// hardware performing an aligned 8- or 16-byte vector access as one transaction; the ISA does not
// promise it (lookback-packed.cu packs both fields in one 32-bit word, which is atomic).
// Why no race: every descriptor access is strong with device scope (morally strong pairs, 8.7.1);
// in[] is only read, out[b] written by block b only.
// Why the spin ends: tile 0's descriptor is written once, and a fair execution reads it.
// Litmus twin: none.
#include <cassert>

enum : unsigned { X = 0, A = 1, P = 2 };

__device__ void store_relaxed(uint2 *ptr, uint2 val)
{
    asm volatile("st.relaxed.gpu.v2.u32 [%0], {%1, %2};" : : "l"(ptr), "r"(val.x), "r"(val.y) : "memory");
}

__device__ uint2 load_relaxed(const uint2 *ptr)
{
    uint2 v;
    asm volatile("ld.relaxed.gpu.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(ptr) : "memory");
    return v;
}

__global__ void scan(const int *in, uint2 *desc, int *out)
{
    const int b = blockIdx.x;
    const int aggregate = in[b];
    int inclusive = aggregate;
    if (b == 0) {
        store_relaxed(&desc[0], make_uint2(P, unsigned(aggregate)));
    } else {
        store_relaxed(&desc[1], make_uint2(A, unsigned(aggregate)));
        uint2 d;
        do {
            d = load_relaxed(&desc[0]);
        } while (d.x == X);
        inclusive = int(d.y) + aggregate;
        store_relaxed(&desc[1], make_uint2(P, unsigned(inclusive)));
        assert(inclusive == 3);
    }
    out[b] = inclusive;
}

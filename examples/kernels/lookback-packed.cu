// CUB-style decoupled look-back over 3 tiles, each tile's status and value packed in ONE word.
// Correct.
//
// ptxmm: launch scan<<<3, 1>>>(int in[3] = {1, 2, 3}, unsigned desc[3], int out[3])
// ptxmm: expect ok
// ptxmm: forall out[0] == 1 && out[1] == 3 && out[2] == 6
//
// Block b owns tile b with aggregate in[b]. A descriptor word desc[b] holds (value << 2) | status,
// status X = 0 (nothing yet), A = 1 (aggregate), P = 2 (inclusive prefix). Tile 0 publishes
// P | in[0]. Tile b > 0 publishes A | in[b], then looks back at tiles b-1, b-2, ...: it spins
// while a descriptor is X, adds its value, and stops at the first P. It then publishes P with its
// inclusive prefix, writes out[b] and asserts the prefix is in[0] + ... + in[b] (with
// in = {1, 2, 3}: (b + 1)(b + 2) / 2). All descriptor accesses are relaxed device-scope
// atomics (ld.relaxed.gpu / st.relaxed.gpu); in[] is only read.
//
// Why no race (PTX ISA memory model): the only location written by one block and read by another
// is desc[], and every access to it is strong with device scope: morally strong pairs, not races.
// out[b] is written by block b only.
// Why the assertion holds: a 32-bit strong access is single-copy atomic with respect to morally
// strong accesses ("Atomicity"), so the status and the value read from one descriptor always
// come from the same store: a word that says A carries tile j's aggregate, a word that says P
// carries tile j's inclusive prefix, which (inductively, by tile j's own assertion) is
// in[0] + ... + in[j]. No ordering between different locations is needed, so relaxed suffices.
// The spins end in every fair execution: each descriptor's last write is P.
// Litmus twin: none.
#include <cassert>
#include <cuda/atomic>

using desc_ref = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

enum : unsigned { X = 0, A = 1, P = 2 };

__device__ void publish(unsigned *desc, int tile, unsigned status, int value)
{
    desc_ref(desc[tile]).store((unsigned(value) << 2) | status, cuda::std::memory_order_relaxed);
}

__global__ void scan(const int *in, unsigned *desc, int *out)
{
    const int b = blockIdx.x;
    const int aggregate = in[b];
    int inclusive = aggregate;
    if (b == 0) {
        publish(desc, 0, P, aggregate);
    } else {
        publish(desc, b, A, aggregate);
        int exclusive = 0;
        for (int j = b - 1; j >= 0; --j) {
            unsigned word;
            do {
                word = desc_ref(desc[j]).load(cuda::std::memory_order_relaxed);
            } while ((word & 3u) == X);
            exclusive += int(word >> 2);
            if ((word & 3u) == P) {
                break;
            }
        }
        inclusive = exclusive + aggregate;
        publish(desc, b, P, inclusive);
    }
    out[b] = inclusive;
    assert(inclusive == (b + 1) * (b + 2) / 2);
}

// CUB-style decoupled look-back over 3 tiles with status and value in TWO words, fenced as CUB
// does (value store, __threadfence, status store; status load, __threadfence, value load).
// Correct.
//
// ptxmm: launch scan<<<3, 1>>>(int in[3] = {1, 2, 3}, int status[3], int aggregate[3], int inclusive[3], int out[3])
// ptxmm: expect ok
// ptxmm: forall out[0] == 1 && out[1] == 3 && out[2] == 6
//
// Block b owns tile b with aggregate in[b]. status[b] is X = 0, A = 1 or P = 2, written and read
// with relaxed device-scope atomics; the values live beside it in plain words: aggregate[b]
// (valid once status[b] is A or P) and inclusive[b] (valid once it is P), written and read with
// plain (weak) stores and loads, each store followed by __threadfence() (membar.gl =
// fence.sc.gpu) before the status store, each status load followed by __threadfence() before
// the value load. Tile 0 publishes P; tile b > 0 publishes A, looks back (spinning while a status
// is X, adding the aggregate of an A tile, stopping at the inclusive prefix of the first P tile),
// publishes P, writes out[b] and asserts its prefix is in[0] + ... + in[b] = (b + 1)(b + 2) / 2.
//
// Why no race (PTX ISA memory model): status[] accesses are strong, device scope: morally strong.
// A value word is read only after a status load that returned A or P, i.e. read a status store
// that the value store precedes. The value store, then the fence, then the strong status store is a
// release pattern (fence followed by a strong write); the strong status load, then the fence, is
// an acquire pattern; they are morally strong and the load reads the store (observation order),
// so they synchronize and base causality order puts the weak value store before the weak value
// load. Every other pair of value accesses is in one thread, or both are loads.
// Why the assertion holds: by coherence each value load reads the value stored before the status
// it saw (no later store to that value word exists); by induction over tiles the prefix is right.
// The spins end in every fair execution: each status word's last write is P.
// Litmus twin: none (the hand-off is examples/teaching/04-both-fences.ptx).
#include <cassert>
#include <cuda/atomic>

using status_ref = cuda::atomic_ref<int, cuda::thread_scope_device>;

enum : int { X = 0, A = 1, P = 2 };

__device__ void publish(int *status, int *value, int tile, int s, int v)
{
    value[tile] = v;
    __threadfence();
    status_ref(status[tile]).store(s, cuda::std::memory_order_relaxed);
}

__global__ void scan(const int *in, int *status, int *aggregate, int *inclusive, int *out)
{
    const int b = blockIdx.x;
    const int mine = in[b];
    int prefix = mine;
    if (b == 0) {
        publish(status, inclusive, 0, P, mine);
    } else {
        publish(status, aggregate, b, A, mine);
        int exclusive = 0;
        for (int j = b - 1; j >= 0; --j) {
            int s;
            do {
                s = status_ref(status[j]).load(cuda::std::memory_order_relaxed);
            } while (s == X);
            __threadfence();
            if (s == P) {
                exclusive += inclusive[j];
                break;
            }
            exclusive += aggregate[j];
        }
        prefix = exclusive + mine;
        publish(status, inclusive, b, P, prefix);
    }
    out[b] = prefix;
    assert(prefix == (b + 1) * (b + 2) / 2);
}

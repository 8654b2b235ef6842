// The two-word decoupled look-back of lookback-two-words.cu WITHOUT its fences: broken.
//
// ptxmm: launch scan<<<3, 1>>>(int in[3] = {1, 2, 3}, int status[3], int aggregate[3], int inclusive[3], int out[3])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[1] != 3 || out[2] != 6
//
// Identical to lookback-two-words.cu except that both __threadfence() calls are gone: the value
// word is stored with a plain store right before a relaxed status store, and read with a plain
// load right after a relaxed status load.
//
// Why a race (PTX ISA memory model): a relaxed store is not a release operation and no release
// fence precedes it; a relaxed load is not an acquire operation and no acquire fence follows it.
// So a status store and the status load that reads it form no release/acquire patterns and do
// not synchronize, and nothing else orders tile j's weak value store before tile b's weak value
// load in causality order. The two conflict (one is a write): a data race (the status accesses
// themselves are morally strong and do not race).
// Why the assertion can fail: having seen status[j] == A (or P), tile b may still read the
// initial 0 from aggregate[j] (or inclusive[j]) and compute a prefix that is too small.
// The spins still end in every fair execution: each status word's last write is P.
#include <cassert>
#include <cuda/atomic>

using status_ref = cuda::atomic_ref<int, cuda::thread_scope_device>;

enum : int { X = 0, A = 1, P = 2 };

__device__ void publish(int *status, int *value, int tile, int s, int v)
{
    value[tile] = v;                                   // no __threadfence() here
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
            } while (s == X);                                 // no __threadfence() here
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

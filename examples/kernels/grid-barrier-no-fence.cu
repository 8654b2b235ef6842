// The sense-reversing grid barrier of grid-barrier.cu WITHOUT its arrival fence: broken.
//
// ptxmm: launch exchange<<<2, 1>>>(unsigned count[1], unsigned sense[1], int slot[2], int out[2])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[0] != 2 || out[1] != 1
//
// Identical to grid-barrier.cu except that the __threadfence() before atomicAdd (F1) is gone:
// a block arrives at the barrier with a bare relaxed atomicAdd.
//
// Why a race (PTX ISA memory model): a relaxed atomic is not a release operation, and without F1
// no release fence precedes it, so a waiting block W has no release pattern covering its slot
// store. The last arriver L reads W's atomicAdd and then passes F2 (an acquire pattern), but an
// acquire pattern synchronizes only with a release pattern: nothing orders W's weak slot store
// before L's weak slot load in causality order, and the two conflict: a data race. (L -> W is
// still ordered by F2 before the sense store and F3 after the sense load.)
// Why the assertion can fail: L may read W's slot before the store: the initial 0.
// The spins still end in every fair execution (the sense flip is still published after F2).
#include <cassert>

constexpr int EPISODES = 1;

__device__ void grid_sync(unsigned *count, volatile unsigned *sense, unsigned &local_sense)
{
    local_sense ^= 1u;
                                                       // F1 missing
    if (atomicAdd(count, 1u) == gridDim.x - 1) {
        atomicExch(count, 0u);
        __threadfence();                               // F2
        *sense = local_sense;
    } else {
        while (*sense != local_sense) {
        }
    }
    __threadfence();                                   // F3
}

__global__ void exchange(unsigned *count, unsigned *sense, int *slot, int *out)
{
    unsigned local_sense = 0;
    const int b = blockIdx.x;
    const int n = gridDim.x;
#pragma unroll
    for (int e = 0; e < EPISODES; ++e) {
        slot[e * n + b] = e * n + b + 1;
        grid_sync(count, sense, local_sense);
        int v = slot[e * n + (b + 1) % n];
        out[b] = v;
        assert(v == e * n + (b + 1) % n + 1);
    }
}

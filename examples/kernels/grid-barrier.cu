// A sense-reversing grid barrier (legacy atomicAdd/atomicExch, __threadfence, volatile spin),
// used once by two blocks to exchange a value. Correct. (grid-barrier-reuse.cu uses it twice,
// which exercises the sense reversal and the counter reset, at a much higher checking cost.)
//
// ptxmm: launch exchange<<<2, 1>>>(unsigned count[1], unsigned sense[1], int slot[2], int out[2])
// ptxmm: expect ok
// ptxmm: forall out[0] == 2 && out[1] == 1
//
// Block b writes slot[b] = b + 1 (weak store), passes the barrier, and reads its neighbour's
// slot[(b + 1) % 2], asserting it sees the neighbour's value (the loop over episodes has one
// iteration here; nvcc removes it).
// Barrier: flip the local sense; __threadfence() (F1); atomicAdd(count, 1) (atom.global.add,
// relaxed, device scope); the last to arrive resets count with atomicExch, __threadfence() (F2)
// and publishes the new sense with a volatile store; the others spin on a volatile load of sense;
// everyone ends with __threadfence() (F3). __threadfence() is membar.gl = fence.sc.gpu.
//
// Why no race and why the assertions hold (PTX ISA memory model):
//  * Waiter W -> last arriver L: W's slot store precedes F1, which precedes W's atomicAdd, a
//    strong write on count: a release pattern (fence followed by a strong write). L's atomicAdd
//    reads W's (or an RMW chain from it: observation order goes through atomics) and is followed
//    by F2: an acquire pattern (strong read followed by an acquire fence). Morally strong
//    (device-scope atomics), so they synchronize: W's slot store precedes L's slot load.
//  * L -> W: L's slot store precedes F2, F2 precedes the volatile sense store (strong: volatile is
//    relaxed.sys): a release pattern. W's volatile load that reads it is followed by F3: an acquire
//    pattern. volatile (.sys) and st.volatile are morally strong: synchronization.
// So every slot load is ordered after the slot store it must see, no weak pair is unordered, and
// coherence gives each load the neighbour's value.
// The spin ends in every fair execution: the final write of sense is the flip.
#include <cassert>

constexpr int EPISODES = 1;

__device__ void grid_sync(unsigned *count, volatile unsigned *sense, unsigned &local_sense)
{
    local_sense ^= 1u;
    __threadfence();                                   // F1
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

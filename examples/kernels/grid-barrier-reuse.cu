// A sense-reversing grid barrier used TWICE by two blocks (legacy atomicAdd/atomicExch,
// __threadfence, volatile spin): the second use checks the sense reversal and the counter reset.
// Correct. (grid-barrier.cu is the same barrier used once: a much smaller check.)
//
// ptxmm: launch exchange<<<2, 1>>>(unsigned count[1], unsigned sense[1], int slot[4], int out[2])
// ptxmm: expect ok
// ptxmm: forall out[0] == 4 && out[1] == 3
//
// Episode e (0, 1): block b writes slot[2e + b] = 2e + b + 1 (weak store), passes the barrier,
// and reads its neighbour's slot[2e + (b + 1) % 2], asserting it sees the neighbour's value.
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
//  * Episode 1's atomicAdds follow F3 (or F2 in L), which follow episode 0's reset of count in
//    causality order, so by coherence they count from 0 again; episode 1's waiter spins for the
//    flipped-back sense (0), which only episode 1's last arriver writes (the waiter has already
//    seen sense == 1, and coherence forbids reading the initial 0 again).
// So every slot load is ordered after the slot store it must see, no weak pair is unordered, and
// coherence gives each load the neighbour's value.
// The spins end in every fair execution: the final write of sense in each episode is the flip.
#include <cassert>

constexpr int EPISODES = 2;

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

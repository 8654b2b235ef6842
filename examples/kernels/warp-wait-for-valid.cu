// CUB-style WaitForValid: a warp of 4 lanes waits until the 4 predecessor tiles' status words
// are all valid, each lane loading one status word, the warp deciding together with
// __all_sync (CUB's WARP_ANY(status == INVALID) loop, cub/agent/single_pass_scan_operators.cuh).
// Correct.
//
// ptxmm: launch wait_for_valid<<<2, 4>>>(unsigned status[4], int value[4], int out[4])
// ptxmm: expect ok
// ptxmm: forall out[0] == 1 && out[1] == 2 && out[2] == 3 && out[3] == 4
//
// Block 0 publishes: thread t stores value[t] = t + 1, then status[t] = 1 with a release store
// (device scope). Block 1 is one warp of 4 lanes: lane l loads status[l] with an acquire load
// (device scope) until __all_sync(0xf, s != 0) says every lane saw a valid status, then loads
// value[l] and asserts it is l + 1.
//
// Why no race (PTX ISA memory model): lane l reads value[l] only after its own acquire load of
// status[l] returned 1, i.e. read the release store that follows the store of value[l] in
// thread l of block 0: the release and acquire are morally strong and the load reads the store,
// so they synchronize and causality order puts the value store before the value load.
// __all_sync orders no memory (the ISA states no memory ordering for vote.sync): each lane relies
// on its own acquire load, never on what another lane saw — if lane 0 instead read value[1]
// after lane 1's acquire, nothing would order it (examples: tests/kernel/test_warp_collectives.py,
// test_only_bar_warp_sync_orders_memory).
// Why the assertion holds: each lane's value load is after its synchronizing acquire.
// The loop ends in every fair execution: block 0's status stores are eventually seen.
#include <cassert>
#include <cuda/atomic>

using status_ref = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

__global__ void wait_for_valid(unsigned *status, int *value, int *out)
{
    const int t = threadIdx.x;
    if (blockIdx.x == 0) {
        value[t] = t + 1;
        status_ref(status[t]).store(1, cuda::std::memory_order_release);
        return;
    }
    unsigned s;
    do {
        s = status_ref(status[t]).load(cuda::std::memory_order_acquire);
    } while (!__all_sync(0xf, s != 0));
    out[t] = value[t];
    assert(out[t] == t + 1);
}

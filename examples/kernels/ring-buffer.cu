// A single-producer single-consumer ring buffer of capacity 2 in global memory, 3 items (so the
// buffer wraps around and a slot is reused). Correct.
//
// ptxmm: launch ring<<<2, 1>>>(int buf[2], unsigned head[1], unsigned tail[1], int out[3])
// ptxmm: expect ok
// ptxmm: forall out[0] == 1 && out[1] == 2 && out[2] == 3
//
// Block 0 produces items 1, 2, 3: for item i it waits until there is room (i - tail < 2, tail
// read with an acquire load), writes buf[i % 2] with a plain store and publishes head = i + 1
// with a release store. Block 1 consumes: for item i it waits until head > i (acquire load),
// reads buf[i % 2] with a plain load, frees the slot with tail = i + 1 (release store), records
// the item in out[i] and asserts it is i + 1. head and tail are device-scope atomic_refs.
//
// Why no race (PTX ISA memory model):
//  * write -> read (the item): the producer's buf store precedes its release store of head
//    (a release pattern); the consumer's acquire load that reads head >= i + 1 reads that store or
//    a later head store of the producer (a release sequence is not needed: the later head store
//    is itself a release that follows the buf store in program order) — morally strong, so the
//    patterns synchronize and the buf store precedes the consumer's buf load in causality order.
//  * read -> write (slot reuse): item 2 goes into buf[0], which held item 0. The producer stores
//    it only after its acquire load of tail read 1 (or more), which the consumer stored with a
//    release store after loading item 0: the consumer's buf[0] load precedes the producer's
//    second buf[0] store in causality order.
// So every conflicting pair of buf accesses is ordered; head/tail accesses are morally strong.
// Why the assertion holds: by coherence the load of item i reads the store of item i (the store
// of item i - 2 to the same slot precedes it, the store of item i + 2 does not exist or follows
// the load).
// The spins end in every fair execution: the other side always makes progress.
// Litmus twin: none.
#include <cassert>
#include <cuda/atomic>

using index_ref = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;
constexpr unsigned CAPACITY = 2;
constexpr unsigned ITEMS = 3;

__global__ void ring(int *buf, unsigned *head, unsigned *tail, int *out)
{
    index_ref h(head[0]);
    index_ref t(tail[0]);
    if (blockIdx.x == 0) {
#pragma unroll
        for (unsigned i = 0; i < ITEMS; ++i) {
            while (i - t.load(cuda::std::memory_order_acquire) >= CAPACITY) {
            }
            buf[i % CAPACITY] = int(i) + 1;
            h.store(i + 1, cuda::std::memory_order_release);
        }
    } else {
#pragma unroll
        for (unsigned i = 0; i < ITEMS; ++i) {
            while (h.load(cuda::std::memory_order_acquire) <= i) {
            }
            int v = buf[i % CAPACITY];
            t.store(i + 1, cuda::std::memory_order_release);
            out[i] = v;
            assert(v == int(i) + 1);
        }
    }
}

// A seqlock: one writer block updates two words under a sequence counter, one reader block takes
// a snapshot and keeps it only if the counter did not move. Correct (the C++ fence recipe).
//
// ptxmm: launch seqlock<<<2, 1>>>(int seq[1], int data[2], int out[2])
// ptxmm: expect ok
// ptxmm: forall out[0] == out[1]
//
// Writer (block 0): seq = 1 (relaxed); release fence; data[0] = data[1] = 1 (relaxed atomics);
// seq = 2 (release). Reader (block 1): s1 = seq (acquire); d0, d1 (relaxed atomics); acquire
// fence; s2 = seq (relaxed). If s1 == s2 and s1 is even the snapshot is kept (out = d0, d1) and
// asserted consistent, d0 == d1; otherwise out stays {0, 0}. nvcc emits ld/st.relaxed.gpu,
// st.release.gpu, ld.acquire.gpu and fence.acq_rel.gpu for the two fences.
//
// Why no race (PTX ISA memory model): every access to seq and data is strong with device scope,
// so every conflicting pair is morally strong; out is only written by the reader.
// Why the assertion holds:
//  * s1 == 2: the reader's acquire load read the writer's release store (morally strong, obs),
//    which synchronizes; both data stores precede it in causality order, so by coherence d0 and d1
//    read 1 and 1.
//  * s1 == 0 and some data read returned 1: that read is strong and followed by the acquire fence
//    (an acquire pattern), the data store it read is strong and preceded by the release fence (a
//    release pattern), and the two are morally strong: the fences synchronize. seq = 1 precedes
//    the release fence, s2 follows the acquire fence, so seq = 1 precedes s2 in causality order and
//    coherence forbids s2 from reading the initial 0: s2 != s1, the snapshot is dropped.
//  * s1 == 0 and both data reads returned 0: d0 == d1.
// (s1 == 1 is odd and never kept.)
// Litmus twin: none in examples/ (the reader's half is examples/teaching/09-relaxed-spin-then-
// fence-acquire.ptx, the writer's examples/teaching/02-release-fence-only.ptx).
#include <cassert>
#include <cuda/atomic>

using device_int = cuda::atomic_ref<int, cuda::thread_scope_device>;

__global__ void seqlock(int *seq, int *data, int *out)
{
    device_int s(seq[0]);
    device_int d0(data[0]);
    device_int d1(data[1]);
    if (blockIdx.x == 0) {
        s.store(1, cuda::std::memory_order_relaxed);
        cuda::atomic_thread_fence(cuda::std::memory_order_release, cuda::thread_scope_device);
        d0.store(1, cuda::std::memory_order_relaxed);
        d1.store(1, cuda::std::memory_order_relaxed);
        s.store(2, cuda::std::memory_order_release);
    } else {
        int s1 = s.load(cuda::std::memory_order_acquire);
        int v0 = d0.load(cuda::std::memory_order_relaxed);
        int v1 = d1.load(cuda::std::memory_order_relaxed);
        cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_device);
        int s2 = s.load(cuda::std::memory_order_relaxed);
        if (s1 == s2 && (s1 & 1) == 0) {
            out[0] = v0;
            out[1] = v1;
            assert(v0 == v1);
        }
    }
}

// A counter signal awaited with a CAS and a nanosleep back-off, fenced on both sides: correct.
//
// ptxmm: launch signal<<<2, 1>>>(int data[1], int counter[1], int out[1])
// ptxmm: expect ok
// ptxmm: forall out[0] == 42
//
// Skeleton from FlashOverlap (github.com/infinigence/FlashOverlap): the consumer is
// src/wait.cuh's kernel_wait_flag, `while (atomicCAS(addr, that, 0) != that) __nanosleep(100);`,
// and the producer the signal of src/overlap/gemm_with_signal.h (EpilogueVisitorSignaling::
// end_epilogue), an atomicAdd on the tile counter once the tile is stored. There the two are
// kernels on two streams; here they are the two blocks of one launch, with one tile (data[0]) and
// `that` = 1, and __threadfence() on both sides.
//
// Why it is correct (PTX ISA memory model): __threadfence() is a fence at .gpu scope (nvcc:
// fence.sc.gpu or fence.acq_rel.gpu, both release and acquire fences). Block 0's fence followed by
// its atomicAdd (atom.add, relaxed, .gpu) is a release pattern on counter[0]; block 1's
// successful atomicCAS (atom.cas, relaxed, .gpu) followed by its fence is an acquire pattern. The
// CAS that succeeds reads the add's write (it expects 1, and only the add writes 1), and both are
// morally strong (.gpu contains both blocks), so the release pattern synchronizes with the
// acquire pattern: data[0] = 42 is ordered before the load of data[0] by causality order, no
// race, and Coherence forbids reading the initial 0. __nanosleep is a delay with no memory effect
// (PTX ISA, nanosleep): the wait is judged by the CAS it retries, which succeeds once the add is
// seen; it ends in every fair execution.
// Broken twin: flag-wait-backoff-no-fence.cu.
#include <cassert>

__global__ void signal(int *data, int *counter, int *out)
{
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        atomicAdd(&counter[0], 1);
    } else {
        while (atomicCAS(&counter[0], 1, 0) != 1) {
            __nanosleep(100);
        }
        __threadfence();
        int d = data[0];
        out[0] = d;
        assert(d == 42);
    }
}

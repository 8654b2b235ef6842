// A counter signal awaited with a CAS and a nanosleep back-off, without fences: a data race.
//
// ptxmm: launch signal<<<2, 1>>>(int data[1], int counter[1], int out[1])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[0] == 0
//
// Skeleton from FlashOverlap (github.com/infinigence/FlashOverlap): the consumer is
// src/wait.cuh's kernel_wait_flag, `while (atomicCAS(addr, that, 0) != that) __nanosleep(100);`,
// and the producer the signal of src/overlap/gemm_with_signal.h (EpilogueVisitorSignaling::
// end_epilogue), an atomicAdd on the tile counter once the tile is stored — as there, with no
// fence on either side. Here both are blocks of one launch, with one tile (data[0]) and `that` = 1.
//
// Why it is wrong (PTX ISA memory model): atomicAdd and atomicCAS are relaxed atomics (atom
// without .sem is .relaxed): neither is a release or an acquire pattern, so the CAS that reads
// the add's 1 synchronizes nothing. The store data[0] = 42 and the load of data[0] are
// conflicting accesses, both weak, that no causality order relates: a data race, and the load
// may return the initial 0 (the assert fails). __nanosleep changes nothing: it is a delay with
// no memory effect (PTX ISA, nanosleep). The fix: __threadfence() before the atomicAdd and after
// the wait (flag-wait-backoff.cu), or a release add and an acquire CAS (cuda::atomic_ref).
#include <cassert>

__global__ void signal(int *data, int *counter, int *out)
{
    if (blockIdx.x == 0) {
        data[0] = 42;
        atomicAdd(&counter[0], 1);
    } else {
        while (atomicCAS(&counter[0], 1, 0) != 1) {
            __nanosleep(100);
        }
        int d = data[0];
        out[0] = d;
        assert(d == 42);
    }
}

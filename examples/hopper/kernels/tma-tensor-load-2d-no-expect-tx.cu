// The TMA tensor load of tma-tensor-load-2d.cu with a PLAIN arrive (CUTLASS's ClusterBarrier::arrive)
// where arrive.expect_tx belongs: the phase is never told the box's 32 bytes. Broken.
//
// ptxmm: launch tma_load<<<1, 2>>>(CUtensorMap tm = tensormap(int in[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, dims {8, 2}, box {4, 2}), int out[8])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[0] != 5
//
// Why the assertion can fail and the loads race (PTX ISA, mbarrier: phase completion; the memory
// consistency model's async proxy): the phase expects one arrival and no bytes, so thread 0's arrive
// alone completes it — pending arrivals 0, tx-count 0 — whether or not the copy has written buf. The
// copy's complete-tx then lands in the next phase (its tx-count −32: legal, the ISA allows tx-counts
// down to −(2^20 − 1), and nobody waits for that phase, so nothing hangs). A try_wait that returns
// True has observed only the arrive, which does not order the copy's async writes (they are not in
// thread 0's program order, and the arrive precedes the copy's issue): the generic loads of buf and
// the async writes are unordered accesses of one location — a data race — and a load may read buf's
// initial 0. Litmus twin: ../tma-tensor-load-2d-no-expect-tx.ptx.
#include <cassert>
#include <cstdint>
#include <cuda.h>  // CUtensorMap

// The instructions as CUTLASS's cute/arch/copy_sm90_tma.hpp and cutlass/arch/barrier.h issue them.
__device__ __forceinline__ uint32_t smem_u32(void const *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void barrier_init(uint64_t *bar, uint32_t count) {
  asm volatile("{\n\tmbarrier.init.shared::cta.b64 [%1], %0; \n}" : : "r"(count), "r"(smem_u32(bar)));
}
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("{\n\tfence.mbarrier_init.release.cluster; \n}" : : : "memory");
}
__device__ __forceinline__ void barrier_arrive(uint64_t *bar) {
  asm volatile("{\n\t.reg .b64 state; \n\tmbarrier.arrive.shared::cta.b64 state, [%0]; \n\t}"
               : : "r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void barrier_wait(uint64_t *bar, uint32_t phase) {
  asm volatile("{\n\t.reg .pred P1; \n\tLAB_WAIT: \n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1; \n\t"
               "@P1 bra DONE; \n\tbra LAB_WAIT; \n\tDONE: \n\t}"
               : : "r"(smem_u32(bar)), "r"(phase) : "memory");
}
constexpr uint64_t EVICT_NORMAL = 0x1000000000000000ull;  // CUTLASS's TMA::CacheHintSm90
__device__ __forceinline__ void tma_load_2d(CUtensorMap const *desc, uint64_t *bar, void *smem,
                                            int32_t crd0, int32_t crd1) {
  uint64_t gmem_int_desc = reinterpret_cast<uint64_t>(desc);
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
               " [%0], [%1, {%3, %4}], [%2], %5;"
               : : "r"(smem_u32(smem)), "l"(gmem_int_desc), "r"(smem_u32(bar)), "r"(crd0), "r"(crd1),
                   "l"(EVICT_NORMAL)
               : "memory");
}

constexpr int ROWS = 2, COLS = 4;

__global__ void tma_load(const __grid_constant__ CUtensorMap tm, int *out)
{
  __shared__ alignas(128) int buf[ROWS][COLS];
  __shared__ uint64_t bar;
  const int t = threadIdx.x;
  if (t == 0) {
    barrier_init(&bar, 1);
    fence_barrier_init();
  }
  __syncthreads();
  if (t == 0) {
    barrier_arrive(&bar);  // BUG: the box's BYTES are never expected
    tma_load_2d(&tm, &bar, buf, 4, 0);
  }
  barrier_wait(&bar, 0);
  for (int i = 0; i < COLS; i++) {
    int v = buf[t][i];
    assert(v == 8 * t + 5 + i);
    out[COLS * t + i] = v;
  }
}

// pipeline-tma-async.cu with the producer's wait on "empty" left out (producer_acquire skipped):
// the refills are issued while the consumers may still be reading the stage. Broken.
//
// ptxmm: launch pipeline<<<1, 3>>>(int in[12] = {10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33}, int out[6])
// ptxmm: expect race, assert-fails, hang
// ptxmm: exists out[0] != 10 || out[1] != 20 || out[2] != 30 || out[3] != 10 || out[4] != 20 || out[5] != 30
//
// The producer issues tile 2's TMA load into stage 0 right after tile 0's (mbarrier.arrive.expect_tx
// on full[0], then the copy), without waiting for the consumers' release on empty[0].
//
// Why it is broken (PTX ISA, memory consistency model; mbarrier): nothing orders the consumers'
// generic reads of tile 0 in buf[0] before the refill's async write of it — the only path from a
// read to the refill would be the consumer's release arrive on empty[0] and an acquire wait of the
// producer, which is gone — so the read and the write race, and a consumer may read tile 2 (30) in
// place of tile 0 (the assertion fails). The two copies into buf[0] are unordered too (a race
// between their writes). And both complete-tx of full[0] may land before a consumer's first wait:
// full[0] then has completed two phases, its current phase has parity 0 and never completes, and
// the consumer's try_wait.parity 0 spins forever (the hang; on the H100 the litmus twin's first
// launch did not finish, docs/hopper.md). Litmus twin: ../pipeline-tma-async-no-empty-wait.ptx.
#include <cassert>
#include <cstdint>

// The instructions, written as CUTLASS's cute/arch/copy_sm90_tma.hpp, cutlass/arch/barrier.h and
// cutlass/pipeline/sm90_pipeline.hpp issue them (inline PTX; shared addresses as 32-bit values).
__device__ __forceinline__ uint32_t smem_u32(void const *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void barrier_init(uint64_t *bar, uint32_t count) {
  asm volatile("{\n\tmbarrier.init.shared::cta.b64 [%1], %0; \n}" : : "r"(count), "r"(smem_u32(bar)));
}
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("{\n\tfence.mbarrier_init.release.cluster; \n}" : : : "memory");
}
__device__ __forceinline__ void barrier_wait(uint64_t *bar, uint32_t phase) {
  uint32_t ticks = 0x989680;  // a suspend-time hint: try_wait gives up after it, and the loop retries
  asm volatile("{\n\t.reg .pred P1; \n\tLAB_WAIT: \n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1, %2; \n\t"
               "@P1 bra DONE; \n\tbra LAB_WAIT; \n\tDONE: \n\t}"
               : : "r"(smem_u32(bar)), "r"(phase), "r"(ticks) : "memory");
}
__device__ __forceinline__ void barrier_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
  asm volatile("{\n\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%1], %0; \n\t}"
               : : "r"(bytes), "r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void barrier_arrive(uint64_t *bar) {
  asm volatile("{\n\t.reg .b64 state; \n\tmbarrier.arrive.shared::cta.b64 state, [%0]; \n\t}"
               : : "r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void tma_load(void *smem, void const *gmem, uint32_t bytes, uint64_t *bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
               : : "r"(smem_u32(smem)), "l"(gmem), "r"(bytes), "r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void fence_view_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" : : : "memory");
}

constexpr int STAGES = 2, TILES = 3, WORDS = 4, BYTES = WORDS * 4;

__global__ void pipeline(int const *in, int *out)
{
  __shared__ alignas(16) int buf[STAGES][WORDS];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  const int t = threadIdx.x;
  if (t == 0) {
    for (int s = 0; s < STAGES; s++) {
      barrier_init(&full[s], 1);
      barrier_init(&empty[s], 2);
    }
    fence_barrier_init();
  }
  __syncthreads();
  if (t == 0) {  // the producer
    for (int k = 0; k < TILES; k++) {
      const int s = k % STAGES;
      // (no producer_acquire: the refill does not wait for the consumers)
      barrier_arrive_expect_tx(&full[s], BYTES);
      tma_load(buf[s], in + k * WORDS, BYTES, &full[s]);
    }
  } else {  // the two consumers
    for (int k = 0; k < TILES; k++) {
      const int s = k % STAGES;
      barrier_wait(&full[s], (k / STAGES) & 1);  // consumer_wait
      const int v = buf[s][0];
      fence_view_async_shared();
      barrier_arrive(&empty[s]);  // consumer_release
      out[3 * (t - 1) + k] = v;
      assert(v == 10 * (k + 1));
    }
  }
}

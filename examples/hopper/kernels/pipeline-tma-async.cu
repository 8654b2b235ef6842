// CUTLASS's PipelineTmaAsync (cutlass/pipeline/sm90_pipeline.hpp) as a CUDA kernel: 2 stages, a
// "full" and an "empty" mbarrier per stage, one producer thread issuing 16-byte TMA loads and two
// consumer threads, three tiles through the two stages (stage 0 is refilled). Correct.
//
// ptxmm: launch pipeline<<<1, 3>>>(int in[12] = {10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33}, int out[6])
// ptxmm: expect ok
// ptxmm: forall out[0] == 10 && out[1] == 20 && out[2] == 30 && out[3] == 10 && out[4] == 20 && out[5] == 30
//
// Thread 0 initialises the barriers (full: 1 arrival, the producer's; empty: 2, one per consumer),
// fences them (fence.mbarrier_init.release.cluster, as PipelineTmaAsync's constructor does) and all
// three meet at __syncthreads(). Then, for tile k in stage s = k % 2 (phase (k / 2) & 1):
//   producer_acquire: wait on empty[s] for the parity the consumers release (the first pass waits
//     for parity 1, the phase before the first, which counts as completed: it returns at once),
//     then mbarrier.arrive.expect_tx on full[s] for 16 bytes;
//   the TMA load: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes of the tile's 16
//     bytes into buf[s], completing 16 bytes on full[s];
//   consumer_wait: try_wait.parity on full[s] (CUTLASS's loop: LAB_WAIT / DONE in a { } block with
//     its own .reg .pred P1); the consumer reads the stage's first word through the generic proxy,
//     issues fence.proxy.async.shared::cta, and consumer_release arrives on empty[s].
//
// Why no race and the assertions hold (PTX ISA, memory consistency model, and cp.async.bulk /
// mbarrier): RAW — the copy's writes are followed by the implicit generic-async proxy fence of its
// completion and its complete-tx (release, .cluster), which with the producer's arrive completes
// the full phase; the consumer's wait (an acquire when it returns True) observes that phase, so the
// generic read of buf[s] is after the async write in proxy-preserved causality order and reads the
// tile. WAR (the refill of stage 0) — the consumers' reads of tile 0 are generic, the refill's write
// async: proxy-preserved base causality (8.9.5) needs a generic-async proxy fence in the CTA between
// them, which each consumer's fence.proxy.async gives, before its release arrive on empty[0]; the
// producer's acquire wait observes both arrivals and issues the refill after it, so each read of
// tile 0 precedes the refill's write. CUTLASS's mainloops read stages with wgmma (an async-proxy
// reader) and need no such fence; pipeline-tma-async-no-consumer-fence.cu shows what it decides for
// generic readers. Litmus twin: ../pipeline-tma-async.ptx (one word per tile, one consumer reading
// the three tiles).
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
      barrier_wait(&empty[s], ((k / STAGES) & 1) ^ 1);  // producer_acquire
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

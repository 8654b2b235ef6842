// pipeline-tma-async.cu with generic-proxy consumers that release a stage without
// fence.proxy.async.shared::cta. Broken (by the ISA's proxy rules).
//
// ptxmm: launch pipeline<<<1, 3>>>(int in[12] = {10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33}, int out[6])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[0] != 10 || out[3] != 10
//
// Each consumer reads tile 0 from buf[0] with ld.shared (the generic proxy) and arrives on empty[0]
// (release); the producer's acquire wait observes both arrivals and issues the refill of buf[0] (an
// async-proxy write).
//
// Why it is broken (PTX ISA, memory consistency model, 8.9.5 proxy-preserved base causality): base
// causality orders each read before the refill (release arrive, acquire wait, issue), but between a
// generic access and an async access of one location proxy-preserved causality needs a
// generic-async proxy fence in that CTA on the path, and there is none: the read is not ordered
// before the refill's write, the pair is a data race, and the model lets the read return the
// refill's tile 2 (30; the assertion fails). CUTLASS's mainloops read stages with wgmma, an
// async-proxy reader, which needs no such fence; a kernel that reads a TMA-loaded stage through
// the generic proxy must fence before releasing it. The hardware has not shown this read (the
// litmus twin: 0 of 1.0e9 on the H100, docs/hopper.md). Litmus twin:
// ../pipeline-tma-async-no-consumer-fence.ptx.
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
      // (no fence.proxy.async before the release)
      barrier_arrive(&empty[s]);  // consumer_release
      out[3 * (t - 1) + k] = v;
      assert(v == 10 * (k + 1));
    }
  }
}

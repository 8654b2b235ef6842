// A TMA tensor load as CUTLASS issues it (cute's SM90_TMA_LOAD_2D): one thread loads a 4×2 box of a
// 8×2 int tensor, described by a CUtensorMap kernel parameter, into shared memory, completing its bytes
// on an mbarrier; both threads wait on the mbarrier and check their row of the box. Correct.
//
// ptxmm: launch tma_load<<<1, 2>>>(CUtensorMap tm = tensormap(int in[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, dims {8, 2}, box {4, 2}), int out[8])
// ptxmm: expect ok
// ptxmm: forall out[0] == 5 && out[1] == 6 && out[2] == 7 && out[3] == 8 && out[4] == 13 && out[5] == 14 && out[6] == 15 && out[7] == 16
//
// The map (what cuTensorMapEncodeTiled makes on the host, and ptxmm crossval encodes per instance):
// INT32 elements, globalDim {8, 2}, globalStrides {32} (rows packed), boxDim {4, 2}. Thread 0
// initialises the mbarrier for one arrival and fences the init (fence.mbarrier_init.release.cluster,
// as CUTLASS's pipelines do); after __syncthreads() it arrives with expect_tx of the box's bytes
// (4 × 2 × 4 = 32) and issues cp.async.bulk.tensor.2d at coordinates {4, 0} (dimension 0 innermost:
// columns 4..7 of rows 0 and 1, in[4..7] and in[12..15]) into buf, whose rows land one after the
// other (PTX ISA, Tensor › tiled mode: the box keeps its layout in shared memory). The map is passed
// as CUTLASS passes it: &tm of the `const __grid_constant__ CUtensorMap` parameter, which nvcc turns
// into `mov.b64 %rd, tma_load_param_0; cvta.param.u64 %rd', %rd;` — the map's generic address.
//
// Why no race and the assertions hold (PTX ISA, cp.async.bulk.tensor, mbarrier, and the memory
// consistency model's async proxy): the copy reads the map through the tensormap proxy and sees its
// only value, the one the host wrote before the launch; its complete-tx carries "completeCount
// argument equal to amount of data copied in bytes", 32, so the phase — expecting 32 bytes and one
// arrival — completes only after the copy, whose writes precede its complete-tx with the implicit
// generic-async proxy fence of its completion between them. The complete-tx is .release at .cluster
// scope and each thread's try_wait (.acquire by default) that returns True observes it, so the
// generic loads of buf are after the async writes in proxy-preserved causality order and read the
// box. Litmus twin: ../tma-tensor-load-2d.ptx (a 2×2 box of a 4×2 tensor, one consumer).
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
__device__ __forceinline__ void barrier_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
  asm volatile("{\n\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%1], %0; \n\t}"
               : : "r"(bytes), "r"(smem_u32(bar)) : "memory");
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

constexpr int ROWS = 2, COLS = 4, BYTES = ROWS * COLS * 4;

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
    barrier_arrive_expect_tx(&bar, BYTES);
    tma_load_2d(&tm, &bar, buf, 4, 0);
  }
  barrier_wait(&bar, 0);
  for (int i = 0; i < COLS; i++) {
    int v = buf[t][i];
    assert(v == 8 * t + 5 + i);
    out[COLS * t + i] = v;
  }
}

// CUTLASS's TMA-store epilogue as a CUDA kernel: one thread stages each tile's results in a 16-byte
// shared-memory buffer, hands it to the async proxy, stores it to global with a bulk copy, and REUSES
// the buffer for the next tile once the copy has read it. Correct.
//
// ptxmm: launch epilogue<<<1, 1>>>(int out[8])
// ptxmm: expect ok
// ptxmm: forall out[0] == 1 && out[1] == 2 && out[2] == 3 && out[3] == 4 && out[4] == 5 && out[5] == 6 && out[6] == 7 && out[7] == 8
//
// For tile k = 0, 1 the thread writes smem[0..3] = 4k+1 .. 4k+4 (nvcc merges the four stores into one
// st.shared.v4.u32), issues CUTLASS's tma_store_fence (fence.proxy.async.shared::cta), the bulk copy
// (cp.async.bulk.global.shared::cta.bulk_group, 16 bytes, to out + 4k) and tma_store_arrive
// (cp.async.bulk.commit_group); before staging tile 1 it waits with tma_store_wait<0>
// (cp.async.bulk.wait_group.read 0). At the end it waits for the copies to complete
// (cp.async.bulk.wait_group 0) and checks what they wrote.
//
// Why no race and the assertion holds (PTX ISA, cp.async.bulk.wait_group and the memory consistency
// model's async proxy): ".read … indicates that the waiting has to be done until all the bulk async
// operations in the specified bulk async-group have completed … the reading from their source
// locations", so tile 1's stores to smem come after copy 0's reads of it (models/ptx-async.cat: the
// implicit proxy fence at the read's completion, D1) and copy 0 reads tile 0; each fence.proxy.async
// orders the generic stores before the next copy's async reads. "The completion of a
// cp{.reduce}.async.bulk operation is followed by an implicit generic-async proxy fence", and
// wait_group 0 is ordered after both completions, so the generic loads of out[0] and out[4] see the
// copies' writes. Litmus twin: ../tma-store-epilogue.ptx (one word per tile).
#include <cassert>
#include <cstdint>

// The instructions as CUTLASS's cute/arch/copy_sm90.hpp and copy_sm90_tma.hpp issue them (inline PTX).
__device__ __forceinline__ void tma_store_fence() {
  asm volatile("fence.proxy.async.shared::cta;" : : : "memory");
}
__device__ __forceinline__ void bulk_copy_s2g(void *gmem, void const *smem, int32_t bytes) {
  uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n"
               : : "l"(gmem), "r"(s), "r"(bytes) : "memory");
}
__device__ __forceinline__ void tma_store_arrive() {
  asm volatile("cp.async.bulk.commit_group;");
}
template <int Count> __device__ __forceinline__ void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group.read %0;" : : "n"(Count) : "memory");
}
template <int Count> __device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" : : "n"(Count) : "memory");
}

constexpr int TILES = 2, WORDS = 4;

__global__ void epilogue(int *out)
{
  __shared__ alignas(16) int smem[WORDS];  // the staging buffer, reused for every tile
  for (int k = 0; k < TILES; k++) {
    if (k > 0)
      tma_store_wait<0>();  // the previous copy has read smem
    for (int i = 0; i < WORDS; i++)
      smem[i] = WORDS * k + i + 1;
    tma_store_fence();
    bulk_copy_s2g(out + WORDS * k, smem, WORDS * 4);
    tma_store_arrive();
  }
  bulk_wait<0>();
  assert(out[0] == 1 && out[WORDS] == WORDS + 1);
}

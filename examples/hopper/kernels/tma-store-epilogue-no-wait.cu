// tma-store-epilogue.cu without tma_store_wait<0>() (no cp.async.bulk.wait_group.read before the
// staging buffer is rewritten). Broken.
//
// ptxmm: launch epilogue<<<1, 1>>>(int out[8])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[0] != 1 || out[1] != 2 || out[2] != 3 || out[3] != 4
//
// The thread stages tile 0 in smem, fences, issues the bulk copy to out[0..3] and commits it, then
// at once stages tile 1 in the same buffer (5 .. 8) for the second copy.
//
// Why it is broken (PTX ISA, cp.async.bulk and the async proxy): the first copy is still in flight
// when the thread stores tile 1; only a wait_group (.read) orders the copy's reads of its source
// before later instructions, and there is none before the stores. The copy's async reads of smem and
// the thread's generic stores to it are unordered: a data race, and the copy may read tile 1's
// values and store them to out[0..3] (the assertion on out[0] fails). The final wait_group 0 still
// makes both copies' writes visible to the loads. Litmus twin: ../tma-store-epilogue-no-wait.ptx.
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
    // (no tma_store_wait<0>: the buffer is rewritten while the copy may still read it)
    for (int i = 0; i < WORDS; i++)
      smem[i] = WORDS * k + i + 1;
    tma_store_fence();
    bulk_copy_s2g(out + WORDS * k, smem, WORDS * 4);
    tma_store_arrive();
  }
  bulk_wait<0>();
  assert(out[0] == 1 && out[WORDS] == WORDS + 1);
}

// A TMA tensor store as the CUDA programming guide writes it (cuda::device::experimental and
// cuda::ptx from libcu++'s <cuda/barrier> and <cuda/ptx>): one thread stages a 4-word tile in shared
// memory, hands it to the async proxy, stores it with cp.async.bulk.tensor.1d into elements 4..7 of
// the tensor the CUtensorMap parameter describes, waits for the store to complete and reads it
// back through the kernel's own pointer to the same buffer. Correct.
//
// ptxmm: launch tma_store<<<1, 1>>>(CUtensorMap tm = tensormap(out, dims {8}, box {4}), int out[8])
// ptxmm: expect ok
// ptxmm: forall out[0] == 0 && out[3] == 0 && out[4] == 1 && out[5] == 2 && out[6] == 3 && out[7] == 4
//
// The map: INT32 elements, globalDim {8}, boxDim {4} (16 bytes, a multiple of 16 as
// cuTensorMapEncodeTiled requires), over the launch buffer out, which the kernel also gets as a
// pointer. The thread writes smem[0..3] (nvcc merges the four stores into one st.shared.v4.u32),
// issues fence.proxy.async.shared::cta (cde::fence_proxy_async_shared_cta), the tensor store at
// coordinate {4} (cde::cp_async_bulk_tensor_1d_shared_to_global: `cp.async.bulk.tensor.1d.global
// .shared::cta.tile.bulk_group`), commits the bulk group and waits for it to complete
// (cuda::ptx::cp_async_bulk_wait_group: `cp.async.bulk.wait_group 0`, not `.read`: the writes, not
// only the reads of smem).
//
// Why no race and the assertions hold (PTX ISA, cp.async.bulk.tensor, cp.async.bulk.wait_group and
// the memory consistency model's async proxy): the proxy fence orders the generic stores of smem
// before the copy's async-proxy reads of it, which the copy's issue follows; "The completion of a
// cp{.reduce}.async.bulk operation is followed by an implicit generic-async proxy fence", and
// wait_group 0 is ordered after that completion, so the thread's generic loads of out[4..7] see the
// copy's writes. Elements outside the box keep their 0. Litmus twin: ../tma-tensor-store.ptx (a
// 2-word box, one staged word).
#include <cassert>
#include <cuda.h>  // CUtensorMap
#include <cuda/barrier>
#include <cuda/ptx>
namespace cde = cuda::device::experimental;
namespace ptx = cuda::ptx;

constexpr int WORDS = 4;

__global__ void tma_store(const __grid_constant__ CUtensorMap tm, int *out)
{
  __shared__ alignas(128) int smem[WORDS];
  for (int i = 0; i < WORDS; i++)
    smem[i] = i + 1;
  cde::fence_proxy_async_shared_cta();
  cde::cp_async_bulk_tensor_1d_shared_to_global(&tm, WORDS, smem);
  cde::cp_async_bulk_commit_group();
  ptx::cp_async_bulk_wait_group(ptx::n32_t<0>());
  for (int i = 0; i < WORDS; i++)
    assert(out[WORDS + i] == i + 1);
}

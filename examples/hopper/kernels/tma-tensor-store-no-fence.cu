// The TMA tensor store of tma-tensor-store.cu WITHOUT fence.proxy.async between the generic stores
// that stage the tile and the tensor store that reads it. Broken.
//
// ptxmm: launch tma_store<<<1, 1>>>(CUtensorMap tm = tensormap(out, dims {8}, box {4}), int out[8])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[4] != 1
//
// Why the assertion can fail and the staging races (memory consistency model, proxies; cp.async.bulk:
// "a fence.proxy.async is required" between generic writes and a bulk copy's reads of them): the
// thread's st.shared writes smem through the generic proxy, the copy reads it through the async
// proxy, and proxy-preserved causality orders two accesses of one location through different proxies
// only with a proxy fence between them. Program order alone does not, so the copy may read smem's
// initial 0 (it is unordered with the generic write: a data race), store it to out[4..7], and the
// wait_group that makes the copy's writes visible makes that stale tile visible. Litmus twin:
// ../tma-tensor-store-no-fence.ptx.
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
  // BUG: no cde::fence_proxy_async_shared_cta() here
  cde::cp_async_bulk_tensor_1d_shared_to_global(&tm, WORDS, smem);
  cde::cp_async_bulk_commit_group();
  ptx::cp_async_bulk_wait_group(ptx::n32_t<0>());
  for (int i = 0; i < WORDS; i++)
    assert(out[WORDS + i] == i + 1);
}

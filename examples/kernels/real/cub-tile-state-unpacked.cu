// CUB's decoupled look-back with the UNPACKED tile state: ScanTileState<T, false> (used when the
// status and the value do not fit one atomic word), three arrays: status, partial, inclusive.
// Source: github:NVIDIA/cccl (commit 571f2fc3, 2026-08-22)
//   cub/cub/agent/single_pass_scan_operators.cuh: ScanTileState<T, false>::SetPartial, SetInclusive,
//     WaitForValid (default_no_delay_t); TilePrefixCallbackOp::lookback;
//   cub/cub/detail/strong_store.cuh store_release(unsigned*), strong_load.cuh load_relaxed(unsigned const*);
//   cub/cub/thread/thread_store.cuh / thread_load.cuh: ThreadStore<STORE_CG> / ThreadLoad<LOAD_CG>.
// Kept (quoted):
//   ThreadStore<STORE_CG>(d_tile_partial + TILE_STATUS_PADDING + tile_idx, tile_partial);
//   detail::store_release(d_tile_status + TILE_STATUS_PADDING + tile_idx, StatusWord(SCAN_TILE_PARTIAL));
//   do { delay(); status = detail::load_relaxed(d_tile_status + ...); __threadfence();
//   } while (__any_sync(0xffffffff, (status == SCAN_TILE_INVALID)));
//   value = ThreadLoad<LOAD_CG>(d_tile_partial + ...);   /   ThreadLoad<LOAD_CG>(d_tile_inclusive + ...)
// Cut: T is int here (CUB takes this path for types that do not fit a word), one thread per block
// (the window is one predecessor and slides back by one tile, not by warp_threads), no padding,
// ThreadStore<STORE_CG>/ThreadLoad<LOAD_CG> as their unsigned-int specialisations (the
// _CUB_STORE_4/_CUB_LOAD_4 macros: asm volatile("st.cg.u32 [%0], %1;" ...) / ("ld.cg.u32 %0, [%1];"
// ...), generic addresses, no "memory" clobber), InitializeStatus (the launch starts every status
// at SCAN_TILE_INVALID = 99).
//
// ptxmm: launch scan<<<3, 1>>>(int in[3] = {1, 2, 3}, unsigned status[3] = {99, 99, 99}, int partial[3], int inclusive[3], int out[3])
// ptxmm: expect ok
// ptxmm: forall out[0] == 1 && out[1] == 3 && out[2] == 6
//
// Why no race (PTX ISA 8.7, 8.9): the value arrays are written with st.cg and read with
// ld.cg — cache operators only, WEAK accesses. A value is read only after a status load
// that returned PARTIAL/INCLUSIVE. Writer: weak value store, then st.release.gpu of the status (a
// release operation; the value store precedes it in program order). Reader: ld.relaxed.gpu of
// the status, then __threadfence() = fence.sc.gpu: a strong read followed by a fence is an
// acquire pattern. The release store and the relaxed load are morally strong (both .gpu, one
// grid) and the load reads the store, so the release synchronizes with the acquire pattern; base
// causality order puts the value store before the value load. The status words are strong.
// Why the assertion holds: by coherence each value load reads the one store to its word; by
// induction over tiles each inclusive prefix is right. The spins end in every fair execution:
// each status word's last write is INCLUSIVE.
#include <cassert>

enum ScanTileStatus { SCAN_TILE_OOB, SCAN_TILE_INVALID = 99, SCAN_TILE_PARTIAL, SCAN_TILE_INCLUSIVE };

__device__ __forceinline__ void store_release(unsigned *ptr, unsigned val)
{
    asm volatile("st.release.gpu.u32 [%0], %1;" : : "l"(ptr), "r"(val) : "memory");
}

__device__ __forceinline__ unsigned load_relaxed(unsigned const *ptr)
{
    unsigned retval;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(retval) : "l"(ptr) : "memory");
    return retval;
}

// ThreadStore<STORE_CG> / ThreadLoad<LOAD_CG> (cub/cub/thread/thread_store.cuh, thread_load.cuh)
__device__ __forceinline__ void ThreadStoreCG(unsigned int *ptr, unsigned int val)
{
    asm volatile("st.cg.u32 [%0], %1;" : : "l"(ptr), "r"(val));
}
__device__ __forceinline__ unsigned int ThreadLoadCG(unsigned int const *ptr)
{
    unsigned int retval;
    asm volatile("ld.cg.u32 %0, [%1];" : "=r"(retval) : "l"(ptr));
    return retval;
}

struct TileState {
    unsigned *d_tile_status;
    int *d_tile_partial;
    int *d_tile_inclusive;

    __device__ void SetInclusive(int tile_idx, int tile_inclusive)
    {
        ThreadStoreCG(reinterpret_cast<unsigned *>(d_tile_inclusive + tile_idx), tile_inclusive);
        store_release(d_tile_status + tile_idx, unsigned(SCAN_TILE_INCLUSIVE));
    }

    __device__ void SetPartial(int tile_idx, int tile_partial)
    {
        ThreadStoreCG(reinterpret_cast<unsigned *>(d_tile_partial + tile_idx), tile_partial);
        store_release(d_tile_status + tile_idx, unsigned(SCAN_TILE_PARTIAL));
    }

    __device__ void WaitForValid(int tile_idx, unsigned &status, int &value)
    {
        do {
            // delay(): default_no_delay_t does nothing on sm_70+
            status = load_relaxed(d_tile_status + tile_idx);
            __threadfence();
        } while (__any_sync(0xffffffff, (status == SCAN_TILE_INVALID)));
        if (status == unsigned(SCAN_TILE_PARTIAL)) {
            value = ThreadLoadCG(reinterpret_cast<unsigned *>(d_tile_partial + tile_idx));
        } else if (status == unsigned(SCAN_TILE_INCLUSIVE)) {
            value = ThreadLoadCG(reinterpret_cast<unsigned *>(d_tile_inclusive + tile_idx));
        }
    }
};

__global__ void scan(const int *in, unsigned *status, int *partial, int *inclusive, int *out)
{
    TileState tile_status{status, partial, inclusive};
    const int tile_idx = blockIdx.x;
    const int block_aggregate = in[tile_idx];
    int inclusive_prefix = block_aggregate;
    if (tile_idx == 0) {
        tile_status.SetInclusive(0, block_aggregate);
    } else {
        tile_status.SetPartial(tile_idx, block_aggregate);
        int predecessor_idx = tile_idx - 1;
        unsigned predecessor_status;
        int value = 0;
        tile_status.WaitForValid(predecessor_idx, predecessor_status, value);  // ProcessWindow
        int exclusive_prefix = value;
        while (__all_sync(0xffffffff, (predecessor_status != unsigned(SCAN_TILE_INCLUSIVE)))) {
            predecessor_idx -= 1;                                   // -= warp_threads in CUB
            tile_status.WaitForValid(predecessor_idx, predecessor_status, value);
            exclusive_prefix = value + exclusive_prefix;
        }
        inclusive_prefix = exclusive_prefix + block_aggregate;
        tile_status.SetInclusive(tile_idx, inclusive_prefix);
    }
    out[tile_idx] = inclusive_prefix;
    assert(inclusive_prefix == (tile_idx + 1) * (tile_idx + 2) / 2);
}

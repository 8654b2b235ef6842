// CUB's decoupled look-back with the PACKED tile state: ScanTileState<int, true>, the status and
// the value of a tile in one 8-byte TxnWord (uint2), here with MemoryOrder::acquire_release: the
// word is stored with st.release.gpu.v2 and loaded with ld.acquire.gpu.v2 (one vector access each).
// Source: github:NVIDIA/cccl (commit 571f2fc3, 2026-08-22)
//   cub/cub/agent/single_pass_scan_operators.cuh: ScanTileState<T, true>::SetPartial, SetInclusive,
//     WaitForValid with Order = MemoryOrder::acquire_release (StoreStatus/LoadStatus on sm_70+),
//     TilePrefixCallbackOp::lookback,
//     fixed_delay_constructor_t<350, 450> (default_delay_t<int>), detail::delay;
//   cub/cub/detail/strong_store.cuh store_release(uint2*), strong_load.cuh load_acquire(uint2 const*).
// Kept (quoted):
//   asm volatile("st.release.gpu.v2.u32 [%0], {%1, %2};" : : "l"(ptr), "r"(val.x), "r"(val.y) : "memory");
//   asm volatile("ld.acquire.gpu.v2.u32 {%0, %1}, [%2];" : "=r"(retval.x), "=r"(retval.y) : "l"(ptr) : "memory");
//   while (__any_sync(0xffffffff, (tile_descriptor.status == SCAN_TILE_INVALID))) { delay_or_prevent_hoisting(); ... }
//   delay<Delay, GridThreshold>: if (gridDim.x < GridThreshold) __threadfence_block(); else __nanosleep(Delay);
//   enum ScanTileStatus { SCAN_TILE_OOB, SCAN_TILE_INVALID = 99, SCAN_TILE_PARTIAL, SCAN_TILE_INCLUSIVE };
// Cut: the 32-lane window (one thread per block here: the window is one predecessor and slides
// back by one tile, not by warp_threads), the TILE_STATUS_PADDING entries, the block-wide scan
// (one int per tile), InitializeStatus (the launch starts every status at SCAN_TILE_INVALID).
//
// ptxmm: launch scan<<<3, 1>>>(int in[3] = {1, 2, 3}, unsigned desc[6] = {99, 0, 99, 0, 99, 0}, int out[3])
// ptxmm: expect assert-fails
// ptxmm: exists out[1] != 3 || out[2] != 6
//
// Why no race (PTX ISA 8.2.4, 8.7): every access to desc[] is strong (.release/.acquire.gpu); two
// strong accesses at gpu scope between threads of one grid are morally strong, and morally strong
// accesses never form a data race. in[] is only read and out[b] only written by block b.
// Why the assertion can fail (PTX ISA 8.2.4 "Vector Data-types"): "memory operations with a
// vector data-type are modelled as a set of equivalent memory operations with a scalar
// data-type, executed in an unspecified order on the elements in the vector". The release store
// is two release stores, status and value, in an unspecified order; the acquire load two acquire
// loads, likewise. When the status element is stored first and the value element's load is
// performed first, the value load is not after any acquire that read the new status, and the
// value store is not before the status store's release: nothing orders the value store before
// the value load, and it may read the initial 0 while the status load reads PARTIAL/INCLUSIVE.
// Acquire/release adds ordering with the OTHER accesses of the thread (the value the tile reads
// is never elsewhere), not between the elements of one vector access. The 8-byte atomicity CUB
// relies on (static_assert sizeof(TxnWord) <= largest_atomic_message_size) is a property of the
// hardware, not of the PTX memory model. The spins end in every fair execution: every status
// word's last write is INCLUSIVE.
#include <cassert>

enum ScanTileStatus { SCAN_TILE_OOB, SCAN_TILE_INVALID = 99, SCAN_TILE_PARTIAL, SCAN_TILE_INCLUSIVE };

__device__ __forceinline__ void store_release(uint2 *ptr, uint2 val)
{
    asm volatile("st.release.gpu.v2.u32 [%0], {%1, %2};" : : "l"(ptr), "r"(val.x), "r"(val.y) : "memory");
}

__device__ __forceinline__ uint2 load_acquire(uint2 const *ptr)
{
    uint2 retval;
    asm volatile("ld.acquire.gpu.v2.u32 {%0, %1}, [%2];" : "=r"(retval.x), "=r"(retval.y) : "l"(ptr) : "memory");
    return retval;
}

__device__ __forceinline__ void delay_or_prevent_hoisting()  // delay<350, 500>() on sm_70+
{
    if (gridDim.x < 500) {
        __threadfence_block();
    } else {
        __nanosleep(350);
    }
}

struct TileDescriptor { unsigned status; int value; };

__device__ void set_status(uint2 *d_tile_descriptors, int tile_idx, unsigned status, int value)
{
    TileDescriptor tile_descriptor{status, value};
    uint2 alias;
    *reinterpret_cast<TileDescriptor *>(&alias) = tile_descriptor;
    store_release(d_tile_descriptors + tile_idx, alias);
}

__device__ void wait_for_valid(uint2 *d_tile_descriptors, int tile_idx, unsigned &status, int &value)
{
    TileDescriptor tile_descriptor;
    {
        uint2 alias = load_acquire(d_tile_descriptors + tile_idx);
        tile_descriptor = reinterpret_cast<TileDescriptor &>(alias);
    }
    while (__any_sync(0xffffffff, (tile_descriptor.status == SCAN_TILE_INVALID))) {
        delay_or_prevent_hoisting();
        uint2 alias = load_acquire(d_tile_descriptors + tile_idx);
        tile_descriptor = reinterpret_cast<TileDescriptor &>(alias);
    }
    status = tile_descriptor.status;
    value = tile_descriptor.value;
}

__global__ void scan(const int *in, unsigned *desc, int *out)
{
    uint2 *d_tile_descriptors = reinterpret_cast<uint2 *>(desc);
    const int tile_idx = blockIdx.x;
    const int block_aggregate = in[tile_idx];
    int inclusive_prefix = block_aggregate;
    if (tile_idx == 0) {
        set_status(d_tile_descriptors, 0, SCAN_TILE_INCLUSIVE, block_aggregate);
    } else {
        set_status(d_tile_descriptors, tile_idx, SCAN_TILE_PARTIAL, block_aggregate);
        int exclusive_prefix = 0;
        int predecessor_idx = tile_idx - 1;
        unsigned predecessor_status;
        int value;
        wait_for_valid(d_tile_descriptors, predecessor_idx, predecessor_status, value);  // ProcessWindow
        exclusive_prefix = value;
        while (__all_sync(0xffffffff, (predecessor_status != SCAN_TILE_INCLUSIVE))) {
            predecessor_idx -= 1;                                   // -= warp_threads in CUB
            wait_for_valid(d_tile_descriptors, predecessor_idx, predecessor_status, value);
            exclusive_prefix = value + exclusive_prefix;
        }
        inclusive_prefix = exclusive_prefix + block_aggregate;
        set_status(d_tile_descriptors, tile_idx, SCAN_TILE_INCLUSIVE, inclusive_prefix);
    }
    out[tile_idx] = inclusive_prefix;
    assert(inclusive_prefix == (tile_idx + 1) * (tile_idx + 2) / 2);
}

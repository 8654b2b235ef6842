// CUTLASS 2.x stream-K: the tile owner takes its peer's partial accumulators with
// Barrier::wait_eq_reset — a RELAXED atomicCAS spin, then __syncthreads(), then plain loads.
// Source: github:NVIDIA/cutlass (commit 7107b055, 2026-08-20)
//   include/cutlass/gemm/kernel/gemm_universal_streamk.h: GemmUniversalStreamk::share_accumulators
//     (first peer: BlockStripedReduceT::store, then Barrier::arrive_inc) and acquire_accumulators
//     (Barrier::wait_eq_reset(params.barrier_workspace, thread_idx, first_block_idx, num_carry_in);
//      BlockStripedReduceT::load_add(accumulator_tile, accum_tile_workspace + accum_tile_offset, thread_idx));
//   include/cutlass/barrier.h: GenericBarrier::wait_eq_reset, arrive_inc, red_release (quoted below);
//   include/cutlass/block_striped.h: BlockStriped::store / load_add (plain element copies).
// Cut: the MMA mainloop and epilogue (block b's accumulator is the constant b + 1 per element), one
// accumulator int per thread, 2 threads per block, one tile shared by two blocks (block 0 the peer
// that shares, block 1 the owner that acquires: num_carry_in = 1).
//
// ptxmm: launch streamk<<<2, 2>>>(int barrier_workspace[1], int partials_workspace[2], int out[2])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[0] != 3 || out[1] != 3
//
// Why a race (PTX ISA 8.9): the sharing side releases: thread t stores partials[t] (weak),
// __syncthreads() (bar.sync: its arrive synchronizes with the waits of the same barrier), thread
// 0 runs fence.acq_rel.gpu then red.relaxed.gpu — a release pattern, cumulative over the weak
// stores of both threads. The owning side acquires NOTHING: thread 0's atom.cas is relaxed (CUDA's
// atomicCAS: atom.global.cas.b32, .relaxed.gpu) and no fence follows it before the data is read;
// __syncthreads() is a CTA barrier, which synchronizes only the CTA's own threads — not a fence
// of gpu scope. With no acquire pattern there is no synchronizes-with, so the weak store of
// partials[t] in block 0 and the weak load of partials[t] in block 1 are not ordered by causality
// order: a data race (the sm90 scheduler's fixup, cutlass-streamk-fixup.cu, waits with
// ld.acquire instead and is race-free).
// Why the assertion can fail: the owner's load may read the initial 0 from partials[t]; it then
// writes 2 instead of 1 + 2 = 3. The spin ends in every fair execution (block 0 adds 1 to the
// flag without waiting; the CAS resets it to 0 once, and nothing else waits on it).
#include <cassert>

// cutlass::GenericBarrier<detail::SyncthreadsSync> (= cutlass::Barrier), include/cutlass/barrier.h
struct Barrier {
    __device__ static int ld_acquire(int *ptr)
    {
        int state = 0;
        // Acquire pattern using acquire modifier
        asm volatile("ld.global.acquire.gpu.b32 %0, [%1];\n" : "=r"(state) : "l"(ptr));
        return state;
    }

    __device__ static void red_release(int *ptr, int val)
    {
        // Release pattern using acq_rel fence + relaxed modifier.  (The fence also releases data
        // that was weakly-written by other threads prior to the last syncthreads)
        asm volatile("fence.acq_rel.gpu;\n");
        asm volatile("red.relaxed.gpu.global.add.s32 [%0], %1;\n" : : "l"(ptr), "r"(val));
    }

    __device__ static void wait_eq(void *lock_ptr, int thread_idx, int flag_idx, int val = 1)
    {
        int *flag_ptr = reinterpret_cast<int *>(lock_ptr) + flag_idx;
        if (thread_idx == 0) {
            // Spin-loop
            #pragma unroll 1
            while (ld_acquire(flag_ptr) != val) {}
        }
        __syncthreads();
    }

    __device__ static void wait_eq_reset(void *lock_ptr, int thread_idx, int flag_idx, int val = 1)
    {
        int *flag_ptr = reinterpret_cast<int *>(lock_ptr) + flag_idx;
        if (thread_idx == 0) {
            // Spin-loop
            #pragma unroll 1
            while (atomicCAS(flag_ptr, val, 0) != val) {}
        }
        __syncthreads();
    }

    __device__ static void arrive_inc(void *lock_ptr, int thread_idx, int flag_idx, int val = 1)
    {
        int *flag_ptr = reinterpret_cast<int *>(lock_ptr) + flag_idx;
        __syncthreads();
        if (thread_idx == 0) {
            red_release(flag_ptr, val);
        }
    }
};

__global__ void streamk(int *barrier_workspace, int *partials_workspace, int *out)
{
    const int thread_idx = threadIdx.x;
    const int block_idx = blockIdx.x;
    const int first_block_idx = 0;
    int accumulator = block_idx + 1;                 // the mainloop's result for this element
    if (block_idx == first_block_idx) {
        // share_accumulators: first peer initializes the workspace partials
        partials_workspace[thread_idx] = accumulator;  // BlockStripedReduceT::store
        Barrier::arrive_inc(barrier_workspace, thread_idx, first_block_idx);
    } else {
        // acquire_accumulators
        int num_carry_in = block_idx - first_block_idx;
        Barrier::wait_eq_reset(barrier_workspace, thread_idx, first_block_idx, num_carry_in);
        accumulator += partials_workspace[thread_idx];  // BlockStripedReduceT::load_add
        out[thread_idx] = accumulator;
        assert(accumulator == 3);
    }
}

// NCCL's Simple protocol hand-off: the sender writes a slice of the FIFO with plain stores, then
// postPeer: fence.acq_rel.sys and a relaxed .sys store of the step counter (tail); the receiver's
// waitPeer spins on the counter with a VOLATILE load (loadStepValue) and then reduceCopy reads the
// data with volatile loads. NCCL's own comment: "volatile is faster than acquire but not as correct."
// Source: github:NVIDIA/nccl (commit 5067397c, 2026-06-11)
//   src/device/prims_simple.h: Primitives<..., ProtoSimple<...>, ...>::loadStepValue, waitPeer, postPeer:
//     // volatile is faster than acquire but not as correct. Make sure reduceCopy
//     // loads data using volatile so it doesn't see stale data in L1.
//     return ld_volatile_global(ptr);
//     while (connStepCache + (isSendNotRecv ? NCCL_STEPS : 0) < step + StepPerSlice) {
//       connStepCache = loadStepValue(connStepPtr); ... }
//     if (Send && (flags & RolePostSend) && (dataStored || ...)) { fence_acq_rel_sys(); }
//     st_relaxed_sys_global(connStepPtr, step);
//   src/device/op128.h: ld_volatile_global (asm "ld.volatile.global.u64"), st_relaxed_sys_global
//     ("st.relaxed.sys.global.u64"), fence_acq_rel_sys ("fence.acq_rel.sys;"), st_global<4>
//     ("st.global.b32"), ld_volatile_global<4> ("ld.volatile.global.b32");
//   src/device/common_kernel.h: reduceCopyPacks (acc[u] = ld_volatile_global<BytePerPack>(minSrcs[0]);
//     st_global<BytePerPack>(minDsts[d], acc[u]);).
// Cut: one sender and one receiver thread in two blocks of one grid (NCCL's peers are blocks of
// kernels on two GPUs; on one GPU the connection's tail and FIFO are global buffers), one 4-byte
// element per slice, StepPerSlice = 1, the ptrs/connFifo bookkeeping, checkAbort.
//
// ptxmm: launch simple<<<2, 1>>>(unsigned long long tail[1], unsigned buff[1], unsigned out[1])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[0] != 42
//
// Why a race (PTX ISA 8.9): the sender releases — weak st.global.b32 of the data, then
// fence.acq_rel.sys, then st.relaxed.sys of the tail (a release pattern). The receiver never
// acquires: its ld.volatile (= ld.relaxed.sys) of the tail is not an acquire operation and no fence
// follows it. Without an acquire pattern there is no synchronizes-with, so the data store is not
// before the data load in causality order. The data load is strong (volatile) but the store is
// weak, so the two are not morally strong: a data race.
// Why the assertion can fail: the receiver may see the new step and read the initial 0.
// nccl-simple-acquire-step.cu reads the step with NCCL's ld_acquire_sys_global instead. The spin
// ends in every fair execution: the tail's last write is the new step.
#include <cassert>
#include <cstdint>

__device__ __forceinline__ uint64_t ld_volatile_global(uint64_t *ptr)
{
    uint64_t ans;
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(ans) : "l"(ptr) : "memory");
    return ans;
}
__device__ __forceinline__ void st_relaxed_sys_global(uint64_t *ptr, uint64_t val)
{
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(ptr), "l"(val) : "memory");
}
__device__ __forceinline__ void fence_acq_rel_sys()
{
    asm volatile("fence.acq_rel.sys;" ::: "memory");
}
__device__ __forceinline__ void st_global_4(uint32_t *addr, uint32_t value)       // st_global<4>
{
    asm volatile("st.global.b32 [%0], %1;" ::"l"(addr), "r"(value) : "memory");
}
__device__ __forceinline__ uint32_t ld_volatile_global_4(uint32_t *addr)          // ld_volatile_global<4>
{
    uint32_t tmp;
    asm volatile("ld.volatile.global.b32 %0, [%1];" : "=r"(tmp) : "l"(addr) : "memory");
    return tmp;
}

__device__ uint64_t loadStepValue(uint64_t *ptr)
{
    // volatile is faster than acquire but not as correct. Make sure reduceCopy
    // loads data using volatile so it doesn't see stale data in L1.
    return ld_volatile_global(ptr);
}

__global__ void simple(unsigned long long *tail, unsigned *buff, unsigned *out)
{
    uint64_t *connStepPtr = reinterpret_cast<uint64_t *>(tail);
    const uint64_t StepPerSlice = 1;
    uint64_t step = 0;
    if (blockIdx.x == 0) {                       // sender: reduceCopy then postPeer<0, 1>(true)
        st_global_4(buff, 42);
        step += StepPerSlice;
        fence_acq_rel_sys();
        st_relaxed_sys_global(connStepPtr, step);
    } else {                                     // receiver: waitPeer<..., Recv=1, ...> then reduceCopy
        uint64_t connStepCache = 0;
        while (connStepCache < step + StepPerSlice) {
            connStepCache = loadStepValue(connStepPtr);
        }
        uint32_t v = ld_volatile_global_4(buff);
        out[0] = v;
        assert(v == 42);
    }
}

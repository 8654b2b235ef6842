// CUTLASS's PipelineAsync (sm90): a 2-stage shared-memory ring between a producer and a consumer
// thread of one CTA, each stage guarded by a `full` and an `empty` mbarrier (cutlass::arch::
// ClusterBarrier), phases tracked by PipelineState (the producer starts at phase 1).
// Source: github:NVIDIA/cutlass (commit 7107b055, 2026-08-20)
//   include/cutlass/pipeline/sm90_pipeline.hpp: PipelineAsync (constructor: init + fence_barrier_init;
//     producer_acquire: empty_barrier_ptr_[stage].wait(phase); producer_commit:
//     full_barrier_ptr_[stage].arrive(); consumer_wait: full_barrier_ptr_[stage].wait(phase);
//     consumer_release: empty_barrier_ptr_[stage].arrive(params_.dst_blockid)), PipelineState,
//     make_producer_start_state;
//   include/cutlass/arch/barrier.h: ClusterBarrier::init, wait, arrive(), arrive(cta_id, pred),
//     fence_barrier_init — the inline asm is quoted in the code below.
// Cut: one producer and one consumer thread (CUTLASS uses warps/warpgroups and elects one
// arriving thread), arrival counts 1, 3 items of one int, no TMA (the producer stores to shared
// memory itself, as PipelineAsync's users do), __syncthreads() after init (the kernel's
// cluster_sync / __syncthreads in CUTLASS's kernels), dst_blockid = 0 (a one-CTA cluster).
//
// ptxmm: launch pipeline<<<1, 2>>>(int out[3])
// ptxmm: expect ok
// ptxmm: forall out[0] == 10 && out[1] == 11 && out[2] == 12
//
// Why no race (PTX ISA 8.9; mbarrier): the producer's weak st.shared of a stage precedes
// its mbarrier.arrive (default .release.cta) on `full`; the consumer's mbarrier.try_wait.parity
// (default .acquire.cta) that returns True observes the completion of that phase: release and
// acquire on the mbarrier object, same CTA, morally strong — they synchronize, ordering the store
// before the consumer's weak ld.shared. The reverse hand-off (consumer's load, arrive on `empty`;
// producer's wait on `empty` before it overwrites the stage) orders the load before the next store
// of that stage. The producer's first wait on each `empty` barrier (phase 1 of a fresh barrier:
// the preceding phase counts as complete) returns at once, as CUTLASS intends.
// Why the assertion holds: each load reads the one store of its item. The waits end: each phase
// the other side waits for is completed by exactly one arrive.
#include <cassert>
#include <cstdint>

struct ClusterBarrier {
    static __device__ void init(uint64_t const *smem_ptr, uint32_t arrive_count)
    {
        uint32_t smem_addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr));
        asm volatile("{\n\t"
                     "mbarrier.init.shared::cta.b64 [%1], %0; \n"
                     "}"
                     :
                     : "r"(arrive_count), "r"(smem_addr)
                     : "memory");
    }
    static __device__ void wait(uint64_t const *smem_ptr, uint32_t phase)
    {
        uint32_t smem_addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr));
        // Arbitrarily large timer value after which try-wait expires and re-tries.
        uint32_t ticks = 0x989680;
        asm volatile("{\n\t"
                     ".reg .pred       P1; \n\t"
                     "LAB_WAIT: \n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1, %2; \n\t"
                     "@P1 bra DONE; \n\t"
                     "bra     LAB_WAIT; \n\t"
                     "DONE: \n\t"
                     "}"
                     :
                     : "r"(smem_addr), "r"(phase), "r"(ticks)
                     : "memory");
    }
    static __device__ void arrive(uint64_t const *smem_ptr, uint32_t cta_id, uint32_t pred)
    {
        uint32_t smem_addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr));
        if (pred) {
            asm volatile("{\n\t"
                         ".reg .b32 remAddr32;\n\t"
                         "mapa.shared::cluster.u32  remAddr32, %0, %1;\n\t"
                         "mbarrier.arrive.shared::cluster.b64  _, [remAddr32];\n\t"
                         "}"
                         :
                         : "r"(smem_addr), "r"(cta_id)
                         : "memory");
        }
    }
    static __device__ void arrive(uint64_t const *smem_ptr)
    {
        uint32_t smem_addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr));
        asm volatile("{\n\t"
                     "mbarrier.arrive.shared::cta.b64 _, [%0];\n\t"
                     "}"
                     :
                     : "r"(smem_addr)
                     : "memory");
    }
};

__device__ void fence_barrier_init()
{
    asm volatile("{\n\t"
                 "fence.mbarrier_init.release.cluster; \n"
                 "}" ::
                     : "memory");
}

constexpr int Stages = 2;

struct PipelineState {               // cutlass::PipelineState<Stages>
    int index_;
    uint32_t phase_;
    __device__ void advance()        // operator++
    {
        ++index_;
        if (index_ == Stages) {
            index_ = 0;
            phase_ ^= 1;
        }
    }
};

__global__ void pipeline(int *out)
{
    __shared__ uint64_t full_barrier[Stages];
    __shared__ uint64_t empty_barrier[Stages];
    __shared__ int smem[Stages];
    const uint32_t dst_blockid = 0;
    if (threadIdx.x == 0) {
        for (int i = 0; i < Stages; i++) {
            ClusterBarrier::init(&full_barrier[i], 1);   // producer arrival count
            ClusterBarrier::init(&empty_barrier[i], 1);  // consumer arrival count
        }
        fence_barrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {                                   // producer
        PipelineState state{0, 1};                            // make_producer_start_state
        for (int k = 0; k < 3; k++) {
            ClusterBarrier::wait(&empty_barrier[state.index_], state.phase_);   // producer_acquire
            smem[state.index_] = 10 + k;
            ClusterBarrier::arrive(&full_barrier[state.index_]);                // producer_commit
            state.advance();
        }
    } else {                                                  // consumer
        PipelineState state{0, 0};
        for (int k = 0; k < 3; k++) {
            ClusterBarrier::wait(&full_barrier[state.index_], state.phase_);    // consumer_wait
            int v = smem[state.index_];
            ClusterBarrier::arrive(&empty_barrier[state.index_], dst_blockid, 1u); // consumer_release
            out[k] = v;
            assert(v == 10 + k);
            state.advance();
        }
    }
}

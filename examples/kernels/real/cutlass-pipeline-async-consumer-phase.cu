// BROKEN TWIN (one token changed): cutlass-pipeline-async.cu with the consumer starting from the
// PRODUCER's start state (phase 1 — make_producer_start_state where a default PipelineState
// belongs). Otherwise CUTLASS's PipelineAsync (sm90): a 2-stage shared-memory ring between a
// producer and a consumer thread of one CTA, each stage guarded by a `full` and an `empty` mbarrier
// (cutlass::arch::ClusterBarrier), phases tracked by PipelineState (the producer starts at phase
// 1).
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
// ptxmm: expect race, assert-fails, hang
// ptxmm: exists out[0] != 10
//
// Why a race (PTX ISA mbarrier.test_wait/try_wait; 8.9): try_wait.parity with parity 1
// on a fresh mbarrier (current phase 0) returns True at once — it waits for the completion of
// "the phase indicated by phaseParity", and the immediately preceding phase (odd) counts as
// complete. That True is not the observation of any arrive: no release to synchronize with. The
// consumer's first ld.shared of stage 0 is then unordered with the producer's st.shared of it:
// two weak accesses of one location, not ordered by causality order — a data race.
// Why the assertion can fail: the load may read shared memory's undefined initial value instead
// of 10.
// Why a hang: the consumer's phases are one behind. If the producer's single arrive on full[1]
// (item 1) lands before the consumer's second wait, full[1] is in phase 1 and the consumer's
// try_wait.parity 1 names the CURRENT phase: it waits for a second arrive on full[1] that never
// comes (3 items: full[1] completes once). The consumer then waits forever in a fair execution.
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
        PipelineState state{0, 1};                            // was: PipelineState state{0, 0};
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

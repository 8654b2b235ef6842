// BROKEN TWIN (one line dropped): tk-semaphore-ring.cu with the producer's wait on inputs_finished
// removed — it refills a ring slot without knowing the consumer has read it. Otherwise
// ThunderKittens' semaphore ring (the LCF/LCSF producer-consumer templates): `inputs_arrived` and
// `inputs_finished` mbarrier semaphores per ring slot, phase bits kept in one bitfield that starts
// at 0xFFFF0000 ("***_finished phase bits start as 1s, ***_arrived phase bits start as 0s").
// Source: github:HazyResearch/ThunderKittens (commit 0b55588d, 2026-04-25)
//   include/ops/thread/util/sync.cuh: kittens::semaphore, init_semaphore, arrive(semaphore&), wait
//     (the KITTENS_HOPPER try_wait branch) — quoted in the code below;
//   include/common/util.cuh: get_phasebit<half>, update_phasebit<half>;
//   prototype/lcf/lcf.cuh: `uint32_t semaphore_bitfield = 0xFFFF0000;` and the producer's
//     `wait(inputs_finished[input_ring], get_phasebit<1>(semaphore_bitfield, input_ring));
//      update_phasebit<1>(semaphore_bitfield, input_ring);` / the consumer's wait on inputs_arrived
//     with get_phasebit<0>.
// Cut: one producer and one consumer thread of one CTA (TK uses warpgroups; the producer's load is
// a TMA in TK, here a plain shared-memory store followed by arrive), 2 ring slots, 3 items,
// __syncthreads() after init (TK's kernels run one before the roles split).
//
// ptxmm: launch ring<<<1, 2>>>(int in[3] = {7, 8, 9}, int out[3])
// ptxmm: expect race, assert-fails, hang
// ptxmm: exists out[0] != 7
//
// Why a race (PTX ISA 8.9): item 2 goes into slot 0 again. The consumer's ld.shared of item 0
// from slot 0 is before its arrive on inputs_finished[0], but the producer no longer waits on that
// barrier: nothing orders the consumer's load of slot 0 before the producer's third st.shared of
// slot 0 (the producer's earlier arrives release in the other direction only). A weak load and a
// weak store of one location, unordered by causality: a data race.
// Why the assertion can fail: the consumer's first load may read item 2's value (9): its wait on
// inputs_arrived[0] (parity 0) returns once phase 0 completed, and the load may come after the
// producer's third store.
// Why a hang: the producer may arrive on inputs_arrived[0] twice (items 0 and 2) before the
// consumer's first wait: phases 0 and 1 complete, the barrier is in phase 2, and try_wait.parity
// with parity 0 then waits for phase 2's completion (PTX ISA, mbarrier.try_wait: parity names the current
// phase or the immediately preceding one), which no arrive will ever bring: the consumer waits
// forever in a fair execution.
#include <cassert>
#include <cstdint>

namespace kittens {
struct semaphore {
private:
    uint64_t value;
};

__device__ static inline void init_semaphore(semaphore &bar, int thread_count, int transaction_count = 0)
{
    void const *const ptr = &bar;
    uint32_t bar_ptr = static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar_ptr), "r"(thread_count + transaction_count));
}

__device__ static inline void arrive(semaphore &sem)
{
    uint32_t mbar_ptr = static_cast<uint32_t>(__cvta_generic_to_shared(&sem));
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" : : "r"(mbar_ptr) : "memory");
}

__device__ static inline void wait(semaphore &sem, int kPhaseBit)
{
    void const *const ptr = &sem;
    uint32_t mbar_ptr = static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
    asm volatile("{\n"
                 ".reg .pred                P1;\n"
                 "LAB_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
                 "@P1                       bra.uni DONE;\n"
                 "bra.uni                   LAB_WAIT;\n"
                 "DONE:\n"
                 "}\n" ::"r"(mbar_ptr),
                 "r"(kPhaseBit));
}

template <int half>
__device__ static inline int get_phasebit(uint32_t bitfield, int ring_id)
{
    if constexpr (half == 0)
        return (bitfield >> (ring_id)) & 0b1;
    else
        return (bitfield >> (ring_id + 16)) & 0b1;
}

template <int half>
__device__ static inline void update_phasebit(uint32_t &bitfield, int ring_id)
{
    if constexpr (half == 0)
        bitfield ^= (1 << (ring_id));
    else
        bitfield ^= (1 << (ring_id + 16));
}
} // namespace kittens

using namespace kittens;
constexpr int INPUT_PIPE_STAGES = 2;

__global__ void ring(const int *in, int *out)
{
    __shared__ semaphore inputs_arrived[INPUT_PIPE_STAGES], inputs_finished[INPUT_PIPE_STAGES];
    __shared__ int input_smem[INPUT_PIPE_STAGES];
    uint32_t semaphore_bitfield = 0xFFFF0000; // ***_finished phase bits start as 1s, ***_arrived phase bits start as 0s
    if (threadIdx.x == 0) {
        for (int i = 0; i < INPUT_PIPE_STAGES; i++) {
            init_semaphore(inputs_arrived[i], 0, 1);
            init_semaphore(inputs_finished[i], 0, 1);
        }
    }
    __syncthreads();
    int input_ring = 0;
    if (threadIdx.x == 0) {                                   // producer
        for (int load_iter = 0; load_iter < 3; load_iter++) {
            // wait(inputs_finished[input_ring], get_phasebit<1>(semaphore_bitfield, input_ring));  <- dropped
            update_phasebit<1>(semaphore_bitfield, input_ring);
            input_smem[input_ring] = in[load_iter];
            arrive(inputs_arrived[input_ring]);
            input_ring = (input_ring + 1) % INPUT_PIPE_STAGES;
        }
    } else {                                                  // consumer
        for (int it = 0; it < 3; it++) {
            wait(inputs_arrived[input_ring], get_phasebit<0>(semaphore_bitfield, input_ring));
            update_phasebit<0>(semaphore_bitfield, input_ring);
            int v = input_smem[input_ring];
            arrive(inputs_finished[input_ring]);
            out[it] = v;
            assert(v == in[it]);
            input_ring = (input_ring + 1) % INPUT_PIPE_STAGES;
        }
    }
}

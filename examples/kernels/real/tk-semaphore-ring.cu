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
// ptxmm: expect ok
// ptxmm: forall out[0] == 7 && out[1] == 8 && out[2] == 9
//
// Why no race (PTX ISA 8.9; mbarrier): the producer's weak st.shared precedes its
// mbarrier.arrive.release.cta on inputs_arrived[slot]; the consumer's mbarrier.try_wait.parity
// (default .acquire.cta) that returns True observes that phase's completion — release/acquire on
// the mbarrier, same CTA: they synchronize, so the store is before the consumer's weak ld.shared.
// The consumer's arrive on inputs_finished[slot] after its load, and the producer's wait on it
// before the slot's next store, order the load before the overwrite. The producer's first wait on
// each inputs_finished slot asks for parity 1 of a fresh barrier (phase 0), which counts as
// complete: it returns at once, as TK intends.
// Why the assertion holds: each load reads its item's one store. The waits end: each awaited phase
// is completed by one arrive. (TK's wait() asm has no "memory" clobber; nvcc -O3 keeps the
// consumer's load after it here — see the committed .ptx.)
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
            wait(inputs_finished[input_ring], get_phasebit<1>(semaphore_bitfield, input_ring));
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

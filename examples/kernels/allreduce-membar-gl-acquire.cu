// The all-reduce with vLLM's pre-sm_70 flags: `membar.sys; st.volatile` / `ld.volatile; membar.gl`: races.
//
// ptxmm: launch allreduce<<<1, 2>>>(RankData dp = peers(int in[2] = {1, 2}), RankSignals sg = peers(sig), unsigned sig[4] per gpu, int result[2] per gpu, rank) on 2 gpus
// ptxmm: expect race, assert-fails
// ptxmm: exists gpu0.result[1] != 4 || gpu1.result[0] != 2
//
// The skeleton is vLLM's custom all-reduce (csrc/custom_all_reduce.cuh): the structs Signal,
// RankData and RankSignals (`Signal *signals[8]`, the peer pointers cudaIpcOpenMemHandle gave
// each rank), st_flag_release / ld_flag_acquire / st_flag_volatile / ld_flag_volatile, and
// barrier_at_end (thread i < ngpus writes `flag` into peer i's end[blockIdx.x][rank] and spins on
// its own end[blockIdx.x][i]; _flag counts the barrier's uses), between the two stages of
// cross_device_reduce_2stage: stage 1 reduce-scatter (rank r sums element r of every rank's input
// into its own Signal's tmp, vLLM's get_tmp_buf), stage 2 all-gather (thread i copies rank i's tmp
// into result[i]). TensorRT-LLM's twoShotAllReduceKernel (customAllReduceKernels.cu) signals the
// same way between its reduce and gather loops (st_flag_release / ld_flag_acquire, thread tidx <
// RANKS_PER_NODE writing peer_barrier_ptrs[tidx]). Shrunk for the model: 2 GPUs, one block
// of 2 threads, one element per rank, Signal's arrays sized for that (sig[4] per gpu: end[0][0],
// end[0][1], _flag[0], tmp[0]). One change: vLLM indexes the by-value struct with threadIdx.x
// (`sg.signals[threadIdx.x]`), which makes nvcc copy it to local memory (a .local stack ptxmm does
// not model); peer() selects the entry instead, and nvcc reads both entries with ld.param and a selp.
//
// The launch: every GPU runs allreduce<<<1, 2>>> with its own rank; `sig` and `result` have one copy
// in each GPU's memory (gpu0.sig, gpu1.sig, ...), and `sg = peers(sig)` passes every rank the same
// array of pointers to all copies (the inputs, `in`, are reached only through `dp`).
//
// Why (PTX ISA, Release and Acquire patterns, Morally strong): this is vLLM's st_flag_release /
// ld_flag_acquire for __CUDA_ARCH__ < 700, verbatim: `membar.sys; st.volatile.global.u32` and
// `ld.volatile.global.u32; membar.gl`. The store side is a release pattern at .sys (fence.sc.sys, then
// a relaxed .sys store). The load side's membar.gl is fence.sc.gpu: its scope holds the threads of
// the spinning GPU only, not the writer on the other GPU, so the acquire pattern (the volatile load,
// then the fence) is not morally strong with the writer's release pattern and does not synchronize
// with it. Nothing orders the tmp store before the peer's tmp load: a data race, and the load may
// return the initial 0 (the assertion fails). With membar.sys after the load the kernel is correct
// (allreduce-volatile-fenced). Caveat: vLLM compiles this path only for GPUs before sm_70, which
// the PTX memory model (sm_70 and later) does not describe; this is the model's verdict on the same
// PTX, not an observation of those GPUs.
#include <cassert>
#include <cstdint>

#define DINLINE __device__ __forceinline__
constexpr int ngpus = 2;
using FlagType = uint32_t;

struct Signal {
  FlagType end[1][ngpus];  // vLLM: end[kMaxBlocks][kMaxCustomCollectiveRanks]
  FlagType _flag[1];       // vLLM: _flag[kMaxBlocks]
  int tmp[1];              // vLLM: the buffer after the Signal, get_tmp_buf()
};
struct __align__(16) RankData { const int *ptrs[ngpus]; };
struct __align__(16) RankSignals { Signal *signals[ngpus]; };

// vLLM's st_flag_release / ld_flag_acquire, the #else branch (__CUDA_ARCH__ < 700)
static DINLINE void st_flag_release(FlagType *flag_addr, FlagType flag) {
  asm volatile("membar.sys; st.volatile.global.u32 [%1], %0;" ::"r"(flag), "l"(flag_addr));
}
static DINLINE FlagType ld_flag_acquire(FlagType *flag_addr) {
  FlagType flag;
  asm volatile("ld.volatile.global.u32 %0, [%1]; membar.gl;" : "=r"(flag) : "l"(flag_addr));
  return flag;
}

// sg.signals[i], without indexing the by-value struct with a register (see above)
DINLINE Signal *peer(const RankSignals &sg, unsigned i) { return i == 0 ? sg.signals[0] : sg.signals[1]; }

DINLINE void barrier_at_end(const RankSignals &sg, Signal *self_sg, int rank) {
  __syncthreads();
  FlagType flag = self_sg->_flag[blockIdx.x] + 1;
  if (threadIdx.x < ngpus) {
    FlagType *peer_counter_ptr = &peer(sg, threadIdx.x)->end[blockIdx.x][rank];
    FlagType *self_counter_ptr = &self_sg->end[blockIdx.x][threadIdx.x];
    st_flag_release(peer_counter_ptr, flag);
    while (ld_flag_acquire(self_counter_ptr) != flag);
  }
  __syncthreads();
  if (threadIdx.x == 0) self_sg->_flag[blockIdx.x] = flag;
}

__global__ void allreduce(RankData dp, RankSignals sg, Signal *self_sg, int *result, int rank) {
  // stage 1 (reduce-scatter): this rank's element of the sum, into its own tmp
  if (threadIdx.x == 0) self_sg->tmp[0] = dp.ptrs[0][rank] + dp.ptrs[1][rank];
  barrier_at_end(sg, self_sg, rank);
  // stage 2 (all-gather): rank i's element, from its tmp
  unsigned i = threadIdx.x;
  int v = peer(sg, i)->tmp[0];
  result[i] = v;
  assert(v == 2 * (int)(i + 1));
}

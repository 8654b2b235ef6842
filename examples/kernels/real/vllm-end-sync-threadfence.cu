// vLLM's custom all-reduce, two-stage version as of commit c9eabec7: end_sync() fences
// with __threadfence_system() before raising the volatile flags, but the waiting side spins on a
// volatile flag and proceeds without a fence. Its own comment doubts the model: "eliminate the case
// that prior writes are not visible after signals become visible. Note that I did not managed to
// make this happen through a lot of testing. Might be the case that hardware provides stronger
// guarantee than the memory model." (Later vLLM replaced these flags with st.release.sys /
// ld.acquire.sys: vllm-barrier-at-end.cu.)
// Source: github vllm-project/vllm csrc/custom_all_reduce.cuh (commit c9eabec7): start_sync,
//   end_sync<ngpus, final_sync = false>, cross_device_reduce_2stage (quoted in the code below:
//   `self_sg->start[blockIdx.x][threadIdx.x] = 0; sg.signals[threadIdx.x]->end[blockIdx.x][rank] = 1;
//   while (!self_sg->end[blockIdx.x][threadIdx.x]);` through `volatile Signal *`).
// Cut (single-GPU variant): the two ranks are the two blocks of one grid (rank = blockIdx.x; each
// rank's Signal, tmp buffer and input are slices of global buffers; each rank's kernel is one block,
// so the Signal's block index is 0), ngpus = 2, int data, size = 2 elements per rank (part = 1),
// packed_t/upcast/downcast (one int per element).
//
// ptxmm: launch cross_device_reduce_2stage<<<2, 2>>>(int in[4] = {1, 2, 10, 20}, int start[4], int end[4], int tmp[2], int result[4])
// ptxmm: expect race, assert-fails, hang
// ptxmm: exists result[0] != 11 || result[1] != 22 || result[2] != 11 || result[3] != 22
//
// Why a race (PTX ISA 8.9): stage 1 writes tmp[rank] with a weak store; end_sync runs
// __syncthreads() and __threadfence_system() (fence.sc.sys) in every thread, then threads 0 and 1
// store 1 to the peers' end flags with st.volatile (relaxed.sys): a release pattern. The peer
// spins with ld.volatile (relaxed.sys) and then __syncthreads() — no fence, no acquire after the
// load that saw the flag: not an acquire pattern, so no synchronizes-with. Stage 2 then reads the
// peer's tmp with a weak load: the weak store and the weak load are unordered — a data race.
// Why the assertion can fail: stage 2 may read the initial 0 from the peer's tmp.
// Why a hang (the reset-to-0 flags): start_sync's thread t first resets its own end slot
// (`self_sg->end[..][t] = 0`, st.volatile) and then raises the peer's start flag (st.volatile):
// two relaxed stores to different locations, which nothing orders for another thread. The peer
// may see the start flag, run stage 1 and raise this rank's end slot to 1 in its end_sync, and
// the reset may still come later in that slot's coherence order: the slot's last write is 0 and
// this thread spins in end_sync forever in a fair execution (its CTA partner then waits at the
// __syncthreads() after it). The later vLLM barrier (vllm-barrier-at-end.cu) resets nothing: it
// compares against an incrementing per-block flag value.
#include <cassert>

struct Signal {
    int start[1][2];
    int end[1][2];
};

template <int ngpus>
__device__ void start_sync(volatile int *start, volatile int *end, int rank)
{
    if (threadIdx.x < ngpus) {
        // reset flag for next time
        end[rank * 2 + threadIdx.x] = 0;             // self_sg->end[blockIdx.x][threadIdx.x] = 0;
        // simultaneously write to the corresponding flag of all ranks.
        start[threadIdx.x * 2 + rank] = 1;           // sg.signals[threadIdx.x]->start[blockIdx.x][rank] = 1;
        // wait until we got true from all ranks
        while (!start[rank * 2 + threadIdx.x])       // while (!self_sg->start[blockIdx.x][threadIdx.x]);
            ;
    }
    __syncthreads();
}

template <int ngpus, bool final_sync = false>
__device__ void end_sync(volatile int *start, volatile int *end, int rank)
{
    __syncthreads();
    // eliminate the case that prior writes are not visible after signals become
    // visible. Note that I did not managed to make this happen through a lot of
    // testing. Might be the case that hardware provides stronger guarantee than
    // the memory model.
    if constexpr (!final_sync) __threadfence_system();
    if (threadIdx.x < ngpus) {
        // reset flag for next time
        start[rank * 2 + threadIdx.x] = 0;
        // simultaneously write to the corresponding flag of all ranks.
        end[threadIdx.x * 2 + rank] = 1;
        // wait until we got true from all ranks
        while (!end[rank * 2 + threadIdx.x])
            ;
    }
    if constexpr (!final_sync) __syncthreads();
}

__global__ void cross_device_reduce_2stage(const int *in, int *start, int *end, int *tmp, int *result)
{
    constexpr int ngpus = 2;
    const int rank = blockIdx.x;
    const int size = 2;
    int tid = threadIdx.x;
    int stride = blockDim.x;
    int part = size / ngpus;
    int start_idx = rank * part;
    int end_idx = rank == ngpus - 1 ? size : start_idx + part;
    int largest_part = part + size % ngpus;
    const int *ptrs[ngpus];
    int *tmps[ngpus];
#pragma unroll
    for (int i = 0; i < ngpus; i++) {
        int target = (rank + i) % ngpus;
        ptrs[i] = in + target * size;
        tmps[i] = tmp + target * part;
    }
    auto tmp_out = tmps[0];
    start_sync<ngpus>(start, end, rank);
    // stage 1: reduce scatter
    for (int idx = start_idx + tid; idx < end_idx; idx += stride) {
        tmp_out[idx - start_idx] = ptrs[0][idx] + ptrs[1][idx];   // packed_reduce
    }
    end_sync<ngpus>(start, end, rank);
    // stage 2: allgather
    for (int idx = tid; idx < largest_part; idx += stride) {
#pragma unroll
        for (int i = 0; i < ngpus; i++) {
            int gather_from_rank = ((rank + i) % ngpus);
            if (gather_from_rank == ngpus - 1 || idx < part) {
                int dst_idx = gather_from_rank * part + idx;
                int v = tmps[i][idx];
                result[rank * size + dst_idx] = v;
                assert(v == in[dst_idx] + in[size + dst_idx]);
            }
        }
    }
}

// Neighbour exchange through shared memory in one block of 4 threads (any block of up to 1024: the
// scale benchmark's), with __syncthreads() between the writes and the reads. Correct.
//
// ptxmm: launch exchange<<<1, 4>>>(int out[4])
// ptxmm: expect ok
// ptxmm: forall out[0] == 2 && out[1] == 3 && out[2] == 4 && out[3] == 1
//
// Thread t writes s[t] = t + 1 into a __shared__ array (weak st.shared), waits at
// __syncthreads() (bar.sync 0), reads its neighbour's s[(t + 1) % 4] (weak ld.shared), stores it
// to out[t] and asserts it is (t + 1) % 4 + 1 (with n threads: % n).
//
// Why no race (PTX ISA memory model, "Synchronizes-with" and the bar instruction): all four
// threads arrive at the same instance of barrier 0; a bar.sync's arrival synchronizes with every
// participant's wait on that instance, so each thread's store to s[t] precedes, in base causality
// order, every load after the barrier, in particular its neighbour's load of s[t]. The only
// conflicting pairs (store of s[t] by thread t, load of s[t] by thread t - 1) are ordered.
// Why the assertion holds: by coherence the load reads the store it is ordered after (the
// initial value is coherence-before it): (t + 1) % 4 + 1.
// Litmus twin: none in examples/ (the barrier's litmus form is `bar.sync` in examples/hopper/).
#include <cassert>

__global__ void exchange(int *out)
{
    __shared__ int s[1024];  // room for a block of up to 1024 threads (the scale benchmark)
    const int t = threadIdx.x;
    const int n = blockDim.x;
    s[t] = t + 1;
    __syncthreads();
    const int v = s[(t + 1) % n];
    out[t] = v;
    assert(v == (t + 1) % n + 1);
}

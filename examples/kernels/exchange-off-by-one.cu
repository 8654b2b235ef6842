// The neighbour exchange of syncthreads-exchange.cu, storing its result one element too far:
// out[t + 1] instead of out[t]. Thread 3 writes out[4] of a 4-element buffer.
//
// ptxmm: launch exchange<<<1, 4>>>(int out[4])
// ptxmm: expect out-of-bounds
// ptxmm: forall out[0] == 0 && out[1] == 2 && out[2] == 3 && out[3] == 4
//
// Why out-of-bounds: the launch gives out 4 ints (out[0..3]); thread t stores to out[t + 1], so
// thread 3 stores to out[4], 16 bytes past the buffer's start: an access outside every buffer of
// the launch. (On a GPU it silently corrupts whatever lies there, or faults.)
// Why no race (PTX ISA memory model): as in syncthreads-exchange.cu, the bar.sync orders every
// store of s[] before every load of it (a CTA barrier's arrival synchronizes with the wait of the
// same barrier instance); each out element is written by one thread only.
// Why the assertion holds: by coherence each load reads the neighbour's store it is ordered after.
// The condition: out[0] is never written (it keeps the launch's 0), out[1..3] get 2, 3, 4.
#include <cassert>

__global__ void exchange(int *out)
{
    __shared__ int s[4];
    const int t = threadIdx.x;
    const int n = blockDim.x;
    s[t] = t + 1;
    __syncthreads();
    const int v = s[(t + 1) % n];
    assert(v == (t + 1) % n + 1);
    out[t + 1] = v;
}

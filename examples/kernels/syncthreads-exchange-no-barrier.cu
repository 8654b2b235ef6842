// The neighbour exchange of syncthreads-exchange.cu WITHOUT __syncthreads(): broken.
//
// ptxmm: launch exchange<<<1, 4>>>(int out[4])
// ptxmm: expect race, assert-fails
// ptxmm: exists out[0] != 2
//
// Thread t writes s[t] = t + 1 into a __shared__ array and immediately reads its neighbour's
// s[(t + 1) % 4]. (nvcc keeps the store before the load: they may alias as far as it knows.)
//
// Why a race (PTX ISA memory model): thread t + 1's store of s[t + 1] and thread t's load of it
// are weak (not morally strong), conflict, and nothing orders them: no barrier, no
// release/acquire pattern, so no causality order between different threads. A data race.
// Why the assertion can fail: the load is not ordered after the store, so it may read the value
// the shared array held before the store (CUDA gives __shared__ memory no initial value; whatever
// the checker starts it at, the neighbour's t + 2 is not the only value the load can return).
#include <cassert>

__global__ void exchange(int *out)
{
    __shared__ int s[4];
    const int t = threadIdx.x;
    const int n = blockDim.x;
    s[t] = t + 1;
    const int v = s[(t + 1) % n];
    out[t] = v;
    assert(v == (t + 1) % n + 1);
}

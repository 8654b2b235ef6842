// Each block reverses its slice of the grid through __shared__ memory, with __syncthreads()
// between the writes and the reads. Race-free for every launch with blocks of at most 1024 threads.
//
// ptxmm: launch reverse<<<2, 4>>>(int out[8])
// ptxmm: expect ok
//
// Thread t of block c writes s[t], waits at the barrier, reads s[n - 1 - t] and writes
// out[c * n + t]: one element of out per thread of the grid, and every read of s ordered after
// every write of s by bar.sync (PTX ISA, bar: the barrier synchronizes the CTA's threads).

__global__ void reverse(int *out)
{
    __shared__ int s[1024];
    const int t = threadIdx.x;
    const int n = blockDim.x;
    const int g = blockIdx.x * n + t;
    s[t] = g;
    __syncthreads();
    out[g] = s[n - 1 - t];
}

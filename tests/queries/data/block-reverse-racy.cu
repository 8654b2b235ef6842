// block-reverse.cu storing to out[threadIdx.x] instead of out[blockIdx.x * blockDim.x + threadIdx.x].
// Broken for any launch of two blocks or more.
//
// ptxmm: launch reverse<<<2, 4>>>(int out[8])
// ptxmm: expect race
//
// Every block writes out[0..n-1]: thread t of block 0 and thread t of block 1 write out[t] with
// weak stores, and nothing orders two CTAs (no grid barrier, no release/acquire pattern): a data
// race (PTX ISA 8.7.1). Within a block the bar.sync orders the writes of s before the reads.

__global__ void reverse(int *out)
{
    __shared__ int s[1024];
    const int t = threadIdx.x;
    const int n = blockDim.x;
    s[t] = blockIdx.x * n + t;
    __syncthreads();
    out[t] = s[n - 1 - t];
}

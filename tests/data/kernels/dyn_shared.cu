// Dynamic shared memory: extern __shared__, sized by the launch's third <<< >>> item.
// ptxmm: launch rotate<<<1, 3, int s[3]>>>(int out[3])
// ptxmm: expect ok
// ptxmm: forall out[0] == 1 && out[1] == 2 && out[2] == 0
__global__ void rotate(int *out)
{
    extern __shared__ int s[];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}

// A __syncthreads neighbour exchange in shared memory: each thread writes its slot, the block
// synchronises, then each thread reads its right neighbour's slot. The barrier orders the writes
// before the reads: no race, and every thread reads its neighbour's value.
// ptxmm: launch exchange<<<1, 3>>>(int out[3])
// ptxmm: expect ok
// ptxmm: forall out[0] == 2 && out[1] == 3 && out[2] == 1
__global__ void exchange(int *out) {
  __shared__ int s[3];
  int t = threadIdx.x;
  s[t] = t + 1;
  __syncthreads();
  out[t] = s[(t + 1) % blockDim.x];
}

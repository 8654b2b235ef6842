// Each thread writes its own element of out, but the last thread also writes one past the end
// (out has n elements, the index runs to n): an out-of-bounds access.
// ptxmm: launch fill<<<1, 4>>>(int out[4], 4)
// ptxmm: expect out-of-bounds
__global__ void fill(int *out, int n) {
  int i = threadIdx.x;
  out[i] = i;
  if (i == n - 1) {
    out[i + 1] = 0;  // off by one
  }
}

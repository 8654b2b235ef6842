// Thread 0 returns early; the others meet at __syncthreads() (bar.sync 0). The PTX ISA (exit):
// as threads exit, a barrier waiting on all threads is released when the exiting threads are the
// only ones that have not arrived. So no thread hangs, and thread 2 reads thread 1's store.
// ptxmm: launch k<<<1, 3>>>(int data[1], int out[1])
// ptxmm: expect ok
__global__ void k(int *data, int *out) {
  if (threadIdx.x == 0)
    return;
  if (threadIdx.x == 1)
    data[0] = 1;
  __syncthreads();
  if (threadIdx.x == 2)
    out[0] = data[0];
}

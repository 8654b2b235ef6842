// Thread 0 traps (__trap(), PTX `trap`) when the flag is 0; thread 1 waits at __syncthreads().
// The trap is a finding; the grid ends with it, so no thread hangs.
// ptxmm: launch k<<<1, 2>>>(int flag[1])
// ptxmm: expect trap
__global__ void k(int *flag) {
  if (threadIdx.x == 0 && flag[0] == 0)
    __trap();
  __syncthreads();
}

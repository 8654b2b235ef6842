// NCCL-style: lane 0's assertion fails (the grid ends there: a failed assert traps), lane 1 waits
// for it at __syncwarp(). The assertion is a finding; no thread hangs after the grid has ended.
// ptxmm: launch k<<<1, 2>>>(int flag[1])
// ptxmm: expect assert-fails
#include <cassert>
__global__ void k(int *flag) {
  if (threadIdx.x == 0)
    assert(flag[0] == 1);
  __syncwarp();
}

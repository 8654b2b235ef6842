// A cluster barrier that one CTA waits at without arriving: CTA 1 of the cluster calls only the
// wait half (`barrier.cluster.wait`), CTA 0 the whole cluster.sync() (arrive, then wait). CTA 1
// waits in a phase it never arrived in, and CTA 0 waits for CTA 1's arrival: both hang (PTX ISA,
// barrier.cluster: the wait "causes the executing thread to wait for all non-exited threads of
// the cluster to perform barrier.cluster.arrive").
// ptxmm: launch k<<<2, 1, 2>>>(int out[1])
// ptxmm: expect hang
// ptxmm: forall out[0] == 0
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void k(int *out) {
  if (blockIdx.x == 0) {
    cg::this_cluster().sync();
  } else {
    asm volatile("barrier.cluster.wait;" ::: "memory");
  }
  out[0] = 0;
}

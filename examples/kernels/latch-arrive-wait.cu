// cuda::latch across two blocks: each block writes its slot, arrives at the latch and waits for
// the other, then reads the other block's slot.
// ptxmm: launch exchange<<<2, 1>>>(long long l[1] = {2}, int data[2], int out[2])
// ptxmm: expect ok
// ptxmm: forall out[0] == 2 && out[1] == 1
// Why ok (PTX ISA, Memory Consistency Model): arrive_and_wait is atom.add.release.gpu of -1 on the
// count, then a wait: ld.acquire.gpu of the count, and while it is not 0, polls (ld.relaxed.gpu)
// until the count differs from the value last seen, then reloads it with ld.acquire.gpu. A block
// leaves only after an acquire load read 0, which is the later of the two release atoms in the
// count's coherence order (an atom reads the latest write): release sequence and acquire
// synchronize, so the other block's data store is in causality order before this block's data load.
// Liveness: the back-off (spin count, %globaltimer) decides nothing about the exit; the outer loop
// carries the last count read, a value each iteration reloads from its own read, and only reads;
// the acquire loads are bound to see both atoms: no execution hangs.
#include <cassert>
#include <cuda/latch>

__global__ void exchange(cuda::latch<cuda::thread_scope_device> *l, int *data, int *out) {
  data[blockIdx.x] = blockIdx.x + 1;
  l->arrive_and_wait();
  int v = data[1 - blockIdx.x];
  assert(v == 2 - blockIdx.x);
  out[blockIdx.x] = v;
}

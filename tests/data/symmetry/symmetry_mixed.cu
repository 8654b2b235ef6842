// Test kernel for symmetry reduction (tests/engines/test_symmetry.py; not in tests/data/kernels, whose every file is a rated kernel test): what each thread does is
// chosen by its mode[] element, so a launch's data decides which threads are interchangeable.
#include <cassert>

__global__ void mixed(const int *mode, unsigned *c, unsigned *d, unsigned *flag)
{
    int m = mode[threadIdx.x];
    if (m == 0) {                      // two commuting increments: their orders on c and d differ
        unsigned a = atomicAdd(c, 1u);
        unsigned b = atomicAdd(d, 1u);
        assert(a == b);
    } else if (m == 1) {
        *c = 7u;                       // a plain store to the atomic location
    } else if (m == 2) {
        atomicAdd(c, threadIdx.x);     // an increment that differs by thread
    } else if (m == 3) {               // an acquire RMW that another thread's release may feed
        unsigned v;
        asm volatile("atom.acquire.gpu.global.add.u32 %0, [%1], 1;" : "=r"(v) : "l"(c) : "memory");
        if (v != 0u) {
            unsigned f = *(volatile unsigned *)flag;
            assert(f == 1u);
        }
    } else {                           // a weak write published by a release RMW
        *flag = 1u;
        asm volatile("atom.release.gpu.global.add.u32 %0, [%1], 1;" : "=r"(m) : "l"(c) : "memory");
    }
}

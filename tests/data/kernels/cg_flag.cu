// Message passing whose flag is read through an inline-asm helper with a weak `ld.cg` (as CUB's
// ThreadLoad<LOAD_CG>), called twice: before the spin and in it. The writer's fence and volatile
// store form a release pattern; the weak reads form no acquire: the datum may be stale.
// explain --fix edits the helper's asm line once, for both calls (tests/explanation/test_fix_edits.py).
// ptxmm: launch mp<<<2, 1>>>(int data[1], unsigned flag[1], int out[1])
// ptxmm: expect race, assert-fails, hang
// ptxmm: exists out[0] != 42
#include <cassert>

__device__ __forceinline__ unsigned load_cg(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

__global__ void mp(int *data, unsigned *flag, int *out)
{
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        *(volatile unsigned *)flag = 1;
    } else {
        unsigned f = load_cg(flag);
        while (f == 0) {
            f = load_cg(flag);
        }
        int d = data[0];
        out[0] = d;
        assert(d == 42);
    }
}

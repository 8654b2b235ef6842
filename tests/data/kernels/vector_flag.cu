// A flag and its datum published with ONE relaxed vector store and polled with ONE relaxed vector
// load, in inline asm as CUB's packed tile state writes them. PTX ISA 8.2.4: a vector access is a
// set of scalar accesses in an unspecified order, so the reader may see the flag beside the old
// datum. explain --fix splits both (tests/explanation/test_fix_edits.py).
// ptxmm: launch mp<<<2, 1>>>(unsigned box[2], unsigned out[1])
// ptxmm: expect assert-fails
// ptxmm: exists out[0] != 42
#include <cassert>

__device__ void put(uint2 *p, uint2 v)
{
    asm volatile("st.relaxed.gpu.v2.u32 [%0], {%1, %2};" : : "l"(p), "r"(v.x), "r"(v.y) : "memory");
}

__device__ uint2 get(const uint2 *p)
{
    uint2 v;
    asm volatile("ld.relaxed.gpu.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p) : "memory");
    return v;
}

__global__ void mp(unsigned *box, unsigned *out)
{
    uint2 *b = reinterpret_cast<uint2 *>(box);
    if (blockIdx.x == 0) {
        put(b, make_uint2(1, 42));
    } else {
        uint2 v;
        do {
            v = get(b);
        } while (v.x == 0);
        out[0] = v.y;
        assert(v.y == 42);
    }
}

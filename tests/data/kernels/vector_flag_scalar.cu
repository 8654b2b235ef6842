// vector_flag.cu with one more access of the box: the consumer also reads the datum as a plain
// 32-bit word. The box is then accessed at two widths, so its vector accesses cannot all become one
// 64-bit access (the model has no mixed-size accesses): explain --fix offers no pack of it
// (tests/explanation/test_fix_edits.py). The plain 32-bit read races with the relaxed vector store
// (a weak access and a strong one, not ordered).
// ptxmm: launch mp<<<2, 1>>>(unsigned box[2], unsigned out[2])
// ptxmm: expect race, assert-fails
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
        out[1] = box[1];
        assert(v.y == 42);
    }
}

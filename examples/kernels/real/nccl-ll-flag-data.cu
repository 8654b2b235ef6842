// NCCL's LL (low-latency) protocol: each 16-byte FIFO line carries two 4-byte data words, each
// beside a 4-byte flag, written with ONE volatile v4 store; the receiver spins on ONE volatile v4
// load until both flags carry the step's flag value, then uses the data.
// Source: github:NVIDIA/nccl (commit 5067397c, 2026-06-11), src/device/prims_ll.h:
//   Primitives<..., ProtoLL, ...>::storeLL and ::readLL (quoted):
//   asm volatile("st.volatile.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(&dst->i4), "r"((uint32_t)val), "r"(flag),
//                "r"((uint32_t)(val >> 32)), "r"(flag) : "memory");
//   do { asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(data1), "=r"(flag1), "=r"(data2),
//          "=r"(flag2) : "l"(&src->i4) : "memory"); if (checkAbort(abort, 1, spins)) break;
//   } while ((flag1 != flag) || (flag2 != flag));
//   uint64_t val64 = data1 + (((uint64_t)data2) << 32);
// Cut: one line, one sender block and one receiver block (on one GPU: the peer's FIFO is a global
// buffer), checkAbort, the head/tail credit flow (waitSend/postRecv), the reduction.
//
// ptxmm: launch ll<<<2, 1>>>(unsigned line[4], unsigned out[2])
// ptxmm: expect assert-fails
// ptxmm: exists out[0] != 42 || out[1] != 43
//
// Why no race (PTX ISA 8.2.4, 8.7): the line's accesses are .volatile — for global memory,
// .volatile is .relaxed.sys — strong, and morally strong with each other (both .sys, the same 4-byte
// elements): no data race on any element.
// Why the assertion can fail: PTX ISA 8.2.4 models a vector access "as a set of equivalent memory
// operations with a scalar data-type, executed in an unspecified order on the elements". The store
// is four relaxed 32-bit stores (data1, flag1, data2, flag2) and the load four relaxed loads; relaxed
// accesses to different locations are ordered by nothing, so the receiver may read flag1 == flag and
// flag2 == flag from the sender's store and data1/data2 from the initial 0s. LL relies on the
// hardware writing each aligned 8-byte half {data, flag} at once — a guarantee the PTX memory model
// does not give (nccl-simple-* use a release/acquire flag instead). The spin ends in every fair
// execution: the flag words' last writes carry the flag.
#include <cassert>
#include <cstdint>

union ncclLLFifoLine {
    struct { uint32_t data1; uint32_t flag1; uint32_t data2; uint32_t flag2; };
    uint64_t v[2];
    int4 i4;
};

__device__ void storeLL(union ncclLLFifoLine *dst, uint64_t val, uint32_t flag)
{
    asm volatile("st.volatile.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(&dst->i4), "r"((uint32_t)val), "r"(flag),
                 "r"((uint32_t)(val >> 32)), "r"(flag)
                 : "memory");
}

__device__ uint64_t readLL(union ncclLLFifoLine *src, uint32_t flag)
{
    uint32_t data1, flag1, data2, flag2;
    do {
        asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(data1), "=r"(flag1), "=r"(data2), "=r"(flag2)
                     : "l"(&src->i4)
                     : "memory");
    } while ((flag1 != flag) || (flag2 != flag));
    uint64_t val64 = data1 + (((uint64_t)data2) << 32);
    return val64;
}

__global__ void ll(unsigned *line, unsigned *out)
{
    union ncclLLFifoLine *fifo = reinterpret_cast<union ncclLLFifoLine *>(line);
    const uint32_t flag = 1;                       // recvFlag(i) / sendFlag(i): NCCL_LL_FLAG(step + 1)
    if (blockIdx.x == 0) {
        storeLL(fifo, 42ull | (43ull << 32), flag);
    } else {
        uint64_t v = readLL(fifo, flag);
        out[0] = (unsigned)v;
        out[1] = (unsigned)(v >> 32);
        assert(v == (42ull | (43ull << 32)));
    }
}

// FIXED TWIN of nccl-ll-flag-data.cu (not NCCL's code): the same line written and read as its two
// 8-byte halves {data, flag}, each with ONE scalar volatile u64 access (the `uint64_t v[2]` view of
// NCCL's ncclLLFifoLine), instead of one v4.u32 access. Otherwise NCCL's LL (low-latency) protocol:
// each 16-byte FIFO line carries two 4-byte data words, each beside a 4-byte flag, written with ONE
// volatile v4 store; the receiver spins on ONE volatile v4 load until both flags carry the step's
// flag value, then uses the data.
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
// ptxmm: launch ll<<<2, 1>>>(unsigned long long line[2], unsigned out[2])
// ptxmm: expect ok
// ptxmm: forall out[0] == 42 && out[1] == 43
//
// Why no race (PTX ISA 8.2.4, 8.7): each half is accessed by one scalar 64-bit .volatile
// (= relaxed.sys) access: strong, morally strong with the other side's. No data race.
// Why the assertion holds: a scalar access of at most 64 bits is ONE memory operation of the model
// (8.2.4 relates scalar accesses up to 64 bits): a load that returns a half whose flag word is the
// new flag returns that same store's data word — the two words cannot come from different writes.
// The spin ends in every fair execution: each half's last write carries the flag.
#include <cassert>
#include <cstdint>

union ncclLLFifoLine {
    struct { uint32_t data1; uint32_t flag1; uint32_t data2; uint32_t flag2; };
    uint64_t v[2];
    int4 i4;
};

__device__ void storeLL(union ncclLLFifoLine *dst, uint64_t val, uint32_t flag)
{
    uint64_t lo = (uint64_t)(uint32_t)val | ((uint64_t)flag << 32);          // {data1, flag1}
    uint64_t hi = (val >> 32) | ((uint64_t)flag << 32);                       // {data2, flag2}
    asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(&dst->v[0]), "l"(lo) : "memory");
    asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(&dst->v[1]), "l"(hi) : "memory");
}

__device__ uint64_t readLL(union ncclLLFifoLine *src, uint32_t flag)
{
    uint32_t data1, flag1, data2, flag2;
    do {
        uint64_t lo, hi;
        asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(lo) : "l"(&src->v[0]) : "memory");
        asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(hi) : "l"(&src->v[1]) : "memory");
        data1 = (uint32_t)lo; flag1 = (uint32_t)(lo >> 32);
        data2 = (uint32_t)hi; flag2 = (uint32_t)(hi >> 32);
    } while ((flag1 != flag) || (flag2 != flag));
    uint64_t val64 = data1 + (((uint64_t)data2) << 32);
    return val64;
}

__global__ void ll(unsigned long long *line, unsigned *out)
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

// Two clock64() reads of one thread: the cycle counter does not go back (PTX ISA, %clock64: "a
// predefined, read-only 64-bit unsigned cycle counter"), so the assert never fails; the
// difference itself is any value (two reads may differ, or not).
// ptxmm: launch clocks<<<1, 2>>>(unsigned long long out[2])
// ptxmm: expect ok
#include <cassert>

__global__ void clocks(unsigned long long *out) {
  long long a = clock64();
  long long b = clock64();
  assert(b - a >= 0);
  out[threadIdx.x] = b - a;
}

// ptxmm: launch pk<<<1, 1>>>(unsigned long long in[1] = {0x0000000500000007}, unsigned out[2], unsigned long long o2[1])
// ptxmm: expect ok
// ptxmm: forall out[0] == 7 && out[1] == 5 && o2[0] == 0x0000000700000005
__global__ void pk(const unsigned long long *in, unsigned *out, unsigned long long *o2) {
  unsigned lo, hi; unsigned long long v = in[0], w;
  asm volatile("mov.b64 {%0, %1}, %2;" : "=r"(lo), "=r"(hi) : "l"(v));
  out[0] = lo; out[1] = hi;
  asm volatile("mov.b64 %0, {%1, %2};" : "=l"(w) : "r"(hi), "r"(lo));
  o2[0] = w;
}

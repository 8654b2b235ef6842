// ptxmm: launch bits<<<1, 1>>>(unsigned in[3] = {0x00F0F00Fu, 0x80000000u, 0u}, unsigned out[12])
// ptxmm: expect ok
// ptxmm: forall out[0] == 12 && out[1] == 8 && out[2] == 0xF00F0F00 && out[3] == 1 && out[4] == 0 && out[5] == 32 && out[6] == 32 && out[7] == 0 && out[8] == 1 && out[9] == 32 && out[10] == 25 && out[11] == 4294967295
__global__ void bits(const unsigned *in, unsigned *out) {
  unsigned a = in[0], b = in[1], z = in[2];
  out[0] = __popc(a); out[1] = __clz(a); out[2] = __brev(a); out[3] = __popc(b);
  out[4] = __clz(b); out[5] = __clz(z); out[6] = __brev(b) == 1 ? 32 : 0; out[7] = __popc(z);
  out[8] = __ffs(a); out[9] = __ffs(b); out[10] = 31 - __clz(a) + 2; out[11] = __ffs(z) - 1;
}

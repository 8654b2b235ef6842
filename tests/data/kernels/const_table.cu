// __constant__ data: a lookup table indexed by thread id and by a loaded value, and a scalar.
// ptxmm: launch lookup<<<1, 2>>>(int idx[2] = {1, 6}, int out[2])
// ptxmm: expect ok
// ptxmm: forall out[0] == 11 && out[1] == 13
__constant__ int tab[4] = {5, 6, 7, 8};
__constant__ int zero;

__global__ void lookup(const int *idx, int *out)
{
    int i = idx[threadIdx.x];
    out[threadIdx.x] = tab[threadIdx.x] + tab[i & 3] + zero;
}

// Each GPU stores rank + 10 into its own out[0] and, through the peer pointers, rank + 20 into the
// other GPU's box[rank] (tests/kernel/test_multi_gpu.py). rank_store.ptx: nvcc -ptx -lineinfo -arch=sm_90
// -O3 rank_store.cu -o rank_store.ptx, run here (nvcc 13.0), the .file path made bare.
// ptxmm: launch rank_store<<<1, 1>>>(int out[1] per gpu, Peers box = peers(int box[2]), rank) on 2 gpus
// ptxmm: expect ok
// ptxmm: forall gpu0.out[0] == 10 && gpu1.out[0] == 11 && gpu1.box[0] == 20 && gpu0.box[1] == 21
struct __align__(16) Peers { int *ptrs[2]; };

__global__ void rank_store(int *out, Peers box, int rank)
{
    out[0] = rank + 10;
    int *next = rank == 0 ? box.ptrs[1] : box.ptrs[0];
    next[rank] = rank + 20;
}

#!/bin/bash
# Session 15 (issue 43): the two-GPU all-reduce examples cross-validated on two H200s of one host
# (kind nvidia-h200-x2), through peer pointers (src/ptxmm/device/kernel_ranks.py). NVLink multicast
# stays off: nothing here creates a multicast object, and NCCL_NVLS_ENABLE=0 for anything launched.
# Needs PYTHONPATH with ptxmm's src and its wheels (z3-solver, lark, click, rich, graphviz, networkx)
# and CuPy; writes to $OUT. Usage: run_s15_multigpu.sh STEP... with STEP one of
#   info     GPUs, driver, NVLink/P2P topology, CuPy
#   gpu      tests/device/test_multigpu_gpu.py (the 5 examples, 0.3 s each)
#   cross    ptxmm crossval examples/kernels/allreduce-*.cu --allow-hang (2 s each)
#   broken   the three broken twins again, 10 s each (their bug state's count)
#   stress   the five again under --stress heavy (the stress kernel on both GPUs), 5 s each
#   lanes    instances/s of allreduce-sys-flags at 1, 8 and 32 instances in flight per GPU
# e.g. bash benchmarks/device/run_s15_multigpu.sh info cross broken lanes gpu stress
set -u
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 PTXMM_CACHE=${PTXMM_CACHE:-/tmp/ptxmm-cache}
P="python3 -m ptxmm"
K=examples/kernels
BROKEN="$K/allreduce-volatile-no-fence.cu $K/allreduce-membar-gl-acquire.cu $K/allreduce-gpu-scope-flags.cu"
for step in "$@"; do
  t0=$(date +%s)
  case $step in
    info)
      { nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv; nvidia-smi topo -m;
        nvidia-smi topo -p2p r; nvcc --version | tail -1; python3 --version;
        python3 -c "import cupy; print('cupy', cupy.__version__)"; } >> $OUT/log.txt 2>&1 ;;
    gpu)
      timeout 240 python3 -m pytest -q tests/device/test_multigpu_gpu.py -p no:cacheprovider -o addopts="" -rs \
        > $OUT/gpu_tests.txt 2>&1
      echo "gpu exit $?: $(tail -1 $OUT/gpu_tests.txt)" >> $OUT/log.txt ;;
    cross)
      timeout 240 $P crossval $K/allreduce-*.cu --allow-hang --no-self-check --budget 2 --timeout 10 \
        --json $OUT/multigpu-crossval.json > $OUT/cross.log 2>&1; echo "cross exit $?" >> $OUT/log.txt ;;
    broken)
      timeout 200 $P crossval $BROKEN --allow-hang --no-self-check --budget 10 --timeout 10 \
        --json $OUT/multigpu-broken.json > $OUT/broken.log 2>&1; echo "broken exit $?" >> $OUT/log.txt ;;
    stress)
      timeout 240 $P crossval $K/allreduce-*.cu --allow-hang --no-self-check --stress heavy --budget 5 \
        --timeout 10 --json $OUT/multigpu-heavy.json > $OUT/stress.log 2>&1; echo "stress exit $?" >> $OUT/log.txt ;;
    lanes)
      timeout 150 python3 benchmarks/device/multigpu_lanes.py $K/allreduce-sys-flags.cu 1 8 32 \
        > $OUT/lanes.jsonl 2>$OUT/lanes.err; echo "lanes exit $?" >> $OUT/log.txt ;;
    *)
      echo "unknown step $step" >> $OUT/log.txt ;;
  esac
  echo "step $step: $(( $(date +%s) - t0 )) s" >> $OUT/log.txt
done
echo done >> $OUT/log.txt

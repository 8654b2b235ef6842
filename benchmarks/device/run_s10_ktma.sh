#!/bin/bash
# Session 10, tensor copies in kernels (helper ktma): run as a step of run_s10.sh (which installs
# the .whl wheels and exports PYTHONPATH), on an H100/H200 (sm_90, CUDA 13, CuPy 14), under 90 s:
#  1. ptxmm crossval of the tensor-copy kernels that end (the CUtensorMap parameter encoded per
#     instance by cuTensorMapEncodeTiled, passed by value): the 2d load and the 1d store, and the store
#     without its proxy fence (its bug: a stale tile, seen or not). Not run: the load with a plain
#     arrive (tma-tensor-load-2d-no-expect-tx): its threads may exit while the copy still writes their
#     CTA's shared memory, which the next launch on that SM may own;
#  2. the GPU test of those kernels and of the encoder (tests/test_device_kernels_tma_gpu.py).
# --no-self-check: the kernel runs do not use the litmus harness the self-checks test.
# Writes to $OUT: ktma.json, ktma.log, ktma-gpu-test.log; a summary on stdout.
set -u
export PYTHONPATH=${PYTHONPATH:-$PWD/src:/tmp/site} PYTHONUNBUFFERED=1 PTXMM_CACHE=${PTXMM_CACHE:-/tmp/ptxmm-cache}
K=examples/hopper/kernels
timeout 55 python3 -m ptxmm crossval $K/tma-tensor-load-2d.cu $K/tma-tensor-store.cu $K/tma-tensor-store-no-fence.cu \
  --no-self-check --budget 1 --timeout 20 --json $OUT/ktma.json > $OUT/ktma.log 2>&1
echo "ktma crossval exit $?"; tail -8 $OUT/ktma.log
timeout 30 python3 -m pytest -q -rs -p no:cacheprovider tests/test_device_kernels_tma_gpu.py > $OUT/ktma-gpu-test.log 2>&1
echo "ktma gpu test exit $?"; tail -8 $OUT/ktma-gpu-test.log

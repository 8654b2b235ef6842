#!/bin/bash
# Session 10, helper ktma (tensor copies in kernels): on an H100/H200 (sm_90, CUDA 13, CuPy 14), in one
# call of under 90 s —
#  1. ptxmm crossval of the tensor-copy kernels that end (the CUtensorMap parameter encoded per
#     instance by cuTensorMapEncodeTiled, passed by value): the 2d load and the 1d store, and the store
#     without its proxy fence (its bug: a stale tile, seen or not). Not run: the load with a plain
#     arrive (tma-tensor-load-2d-no-expect-tx): its threads may exit while the copy still writes their
#     CTA's shared memory, which the next launch on that SM may own;
#  2. the GPU test of those kernels and of the encoder (tests/test_device_kernels_tma_gpu.py).
# --no-self-check: the litmus harness's self-checks (two more nvcc compiles) would not fit the 90 s;
# the kernel runs do not use that harness. Needs ../.whl (z3-solver, lark wheels) as run_s8.sh.
# Writes to $OUT.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ../.whl/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -1; } > $OUT/log.txt 2>&1
K=examples/hopper/kernels
timeout 55 python3 -m ptxmm crossval $K/tma-tensor-load-2d.cu $K/tma-tensor-store.cu $K/tma-tensor-store-no-fence.cu \
  --no-self-check --budget 1 --timeout 20 --json $OUT/ktma.json > $OUT/ktma.log 2>&1; echo "crossval exit $?" >> $OUT/log.txt
timeout 30 python3 -m pytest -q -p no:cacheprovider tests/test_device_kernels_tma_gpu.py > $OUT/gpu-test.log 2>&1
echo "gpu test exit $?" >> $OUT/log.txt; tail -3 $OUT/gpu-test.log >> $OUT/log.txt; echo done >> $OUT/log.txt

#!/bin/bash
# Session 10's tensor-copy device call (issue 27, item 4), under 120 s in all:
#  1. ptxmm crossval of the four tma-tensor examples (cp.async.bulk.tensor loads and stores over
#     litmus tensor maps; the two tensormap-update examples stay refused: tests/test_device_tensor.py);
#  2. the GPU test of the tensor copies (tests/test_device_tensor_gpu.py: 0 violations, histogram
#     totals equal to the instances, the box moved).
# Needs ../.whl (z3-solver, lark wheels; installed by the lead's wrapper) and pytest. Writes to $OUT:
# log.txt (summary), tensor.json and crossval.log, gpu_tests.txt, the generated CUDA of the 2d load.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ../.whl/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -1; git log -1 --oneline; } > $OUT/log.txt 2>&1
P="python3 -m ptxmm"
timeout 10 $P codegen examples/hopper/tma-tensor-load-2d.ptx > $OUT/tma-tensor-load-2d.cu 2>&1
timeout 70 $P crossval examples/hopper/tma-tensor-*.ptx \
  --budget 1 --timeout 15 --json $OUT/tensor.json > $OUT/crossval.log 2>&1; echo "crossval exit $?" >> $OUT/log.txt
tail -25 $OUT/crossval.log >> $OUT/log.txt
timeout 40 python3 -m pytest -q -rs tests/test_device_tensor_gpu.py -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1
echo "gpu tests exit $?" >> $OUT/log.txt; tail -15 $OUT/gpu_tests.txt >> $OUT/log.txt
echo done >> $OUT/log.txt

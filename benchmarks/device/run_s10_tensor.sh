#!/bin/bash
# Session 10's tensor-copy device call (issue 27, item 4), under 120 s in all; run as a step of
# run_s10.sh (which installs the .whl wheels and exports PYTHONPATH) or alone after doing that:
#  1. ptxmm crossval of the four tma-tensor examples (cp.async.bulk.tensor loads and stores over
#     litmus tensor maps; the two tensormap-update examples stay refused: tests/test_device_tensor.py);
#  2. the GPU test of the tensor copies (tests/test_device_tensor_gpu.py: 0 violations, histogram
#     totals equal to the instances, the box moved).
# Writes to $OUT: tensor.json, tensor-crossval.log, tensor-gpu-tests.txt, the generated CUDA of
# the 2d load (tma-tensor-load-2d.cu); a summary on stdout (run_s10.sh appends it to log.txt).
set -u
export PYTHONPATH=${PYTHONPATH:-$PWD/src:/tmp/site} PYTHONUNBUFFERED=1 PTXMM_CACHE=${PTXMM_CACHE:-/tmp/ptxmm-cache}
P="python3 -m ptxmm"
echo "run_s10_tensor: $(git log -1 --oneline 2>/dev/null)"
timeout 10 $P codegen examples/hopper/tma-tensor-load-2d.ptx > $OUT/tma-tensor-load-2d.cu 2>&1
timeout 70 $P crossval examples/hopper/tma-tensor-*.ptx --budget 1 --timeout 15 \
  --json $OUT/tensor.json > $OUT/tensor-crossval.log 2>&1
echo "tensor crossval exit $?"; tail -25 $OUT/tensor-crossval.log
timeout 40 python3 -m pytest -q -rs tests/test_device_tensor_gpu.py -p no:cacheprovider > $OUT/tensor-gpu-tests.txt 2>&1
echo "tensor gpu tests exit $?"; tail -15 $OUT/tensor-gpu-tests.txt

#!/bin/bash
# Session 13: the real-library kernels whose argued verdict has a race or a failing assert (and that
# the harness runs), under --stress heavy, 2 s each: is the bug seen on the H200? Run by run_s13.sh
# (as a STEP) so its PYTHONPATH and wheels are set.
R=examples/kernels/real
timeout 240 python3 -m ptxmm crossval $R/cutlass-streamk-acquire-accumulators.cu $R/cutlass-streamk-fixup-no-sync.cu \
  $R/nccl-ll-flag-data.cu $R/nccl-simple-volatile-step.cu $R/pytorch-reduce-last-block.cu \
  $R/trtllm-oneshot-block-barrier.cu $R/trtllm-twoshot-syncthreads.cu examples/kernels/lookback-vector.cu \
  --no-self-check --stress heavy --budget 2 --timeout 30 --json $OUT/real-heavy.json > $OUT/real-heavy.log 2>&1
echo "real-heavy exit $?"

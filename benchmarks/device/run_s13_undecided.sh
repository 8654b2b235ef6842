#!/bin/bash
# Session 13: the kernels whose liveness the model does not decide, run with crossval --allow-undecided
# (1 s each; one that spins is a timeout row after 30 s). Run by run_s13.sh as a STEP.
K=examples/kernels; R=examples/kernels/real
timeout 400 python3 -m ptxmm crossval --allow-undecided $K/binary-semaphore-lock.cu \
  $K/splitk-semaphore-syncthreads-and.cu $K/warp-wait-for-valid.cu $R/cub-tile-state-packed-acqrel.cu \
  $R/cub-tile-state-packed.cu $R/cub-tile-state-unpacked.cu $R/cub-tile-state-unpacked-no-fence.cu \
  $R/cutlass-semaphore.cu $R/cutlass-semaphore-release-no-sync.cu $R/deepep-barrier-block.cu \
  --no-self-check --budget 1 --timeout 30 --json $OUT/undecided.json > $OUT/undecided.log 2>&1
echo "undecided exit $?"

#!/bin/bash
# Session 14's device call (lead), on an H200 (sm_90): the kernels with module-scope __device__
# variables, now one copy per instance (src/ptxmm/device/kernel_vars.py).
# Needs (carried, git-ignored): .whl (z3-solver, lark, click, rich, graphviz, networkx wheels). Writes to $OUT.
# Usage: run_s14.sh STEP... with STEP one of
#   gpu      the GPU test files (tests/device/*gpu*.py)
#   vars     ptxmm crossval of the module-variable kernels (1 s each), and the same under --stress heavy
#   kernels  ptxmm crossval examples/kernels/*.cu (1 s each)
#   real     ptxmm crossval examples/kernels/real/*.cu (1 s each)
#   coop     the cooperative-launch kernels (1 s each), and the same under --stress heavy
#   undecided  the kernels whose liveness the model does not decide, under --allow-undecided
# e.g. bash benchmarks/device/run_s14.sh vars kernels real gpu
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  > $OUT/pip.txt 2>&1 || { cat $OUT/pip.txt; exit 1; }
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -1;
  python3 --version; python3 -c "import cupy; print('cupy', cupy.__version__)"; git log -1 --oneline 2>/dev/null; } >> $OUT/log.txt 2>&1
P="python3 -m ptxmm"
VARS="examples/kernels/last-block-reset.cu examples/kernels/last-block-reset-fenced.cu examples/kernels/thread-fence-reduction.cu"
COOP="examples/kernels/grid-sync-cg.cu examples/kernels/real/cg-grid-sync-reduce.cu"
R=examples/kernels/real
UNDECIDED="$R/cub-tile-state-packed-acqrel.cu $R/cub-tile-state-packed.cu $R/cub-tile-state-unpacked.cu
  $R/cub-tile-state-unpacked-no-fence.cu $R/cutlass-semaphore.cu $R/cutlass-semaphore-release-no-sync.cu
  $R/deepep-barrier-block.cu examples/kernels/binary-semaphore-lock.cu
  examples/kernels/splitk-semaphore-syncthreads-and.cu examples/kernels/warp-wait-for-valid.cu"
for step in "$@"; do
  t0=$(date +%s)
  case $step in
    gpu)
      gt=$(ls tests/device/*gpu*.py)
      timeout 200 python3 -m pytest -q $gt -p no:cacheprovider -o addopts="" > $OUT/gpu_tests.txt 2>&1
      echo "gpu exit $?: $(tail -1 $OUT/gpu_tests.txt)" >> $OUT/log.txt ;;
    vars)
      timeout 120 $P crossval $VARS --no-self-check --budget 1 --timeout 20 \
        --json $OUT/vars-crossval.json > $OUT/vars.log 2>&1; echo "vars exit $?" >> $OUT/log.txt
      timeout 120 $P crossval $VARS --no-self-check --stress heavy --budget 2 --timeout 20 \
        --json $OUT/vars-heavy.json > $OUT/vars-heavy.log 2>&1; echo "vars heavy exit $?" >> $OUT/log.txt ;;
    kernels)
      timeout 200 $P crossval examples/kernels/*.cu --no-self-check --budget 1 --timeout 20 \
        --json $OUT/kernels-crossval.json > $OUT/kernels.log 2>&1; echo "kernels exit $?" >> $OUT/log.txt ;;
    real)
      timeout 300 $P crossval examples/kernels/real/*.cu --no-self-check --budget 1 --timeout 20 \
        --json $OUT/real-crossval.json > $OUT/real.log 2>&1; echo "real exit $?" >> $OUT/log.txt ;;
    coop)
      timeout 150 $P crossval $COOP --no-self-check --budget 1 --timeout 60 \
        --json $OUT/coop-crossval.json > $OUT/coop.log 2>&1; echo "coop exit $?" >> $OUT/log.txt
      timeout 150 $P crossval $COOP --no-self-check --stress heavy --budget 2 --timeout 60 \
        --json $OUT/coop-heavy.json > $OUT/coop-heavy.log 2>&1; echo "coop heavy exit $?" >> $OUT/log.txt ;;
    undecided)
      timeout 250 $P crossval $UNDECIDED --allow-undecided --no-self-check --budget 1 --timeout 60 \
        --json $OUT/undecided.json > $OUT/undecided.log 2>&1; echo "undecided exit $?" >> $OUT/log.txt ;;
    *)
      timeout 200 bash "$step" >> $OUT/log.txt 2>&1; echo "$step exit $?" >> $OUT/log.txt ;;
  esac
  echo "step $step: $(( $(date +%s) - t0 )) s" >> $OUT/log.txt
done
echo done >> $OUT/log.txt

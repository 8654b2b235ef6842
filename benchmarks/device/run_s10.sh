#!/bin/bash
# Session 10's device calls (lead), on an H200 (sm_90, like the H100 of earlier sessions).
# Needs (carried, git-ignored): .whl (z3-solver, lark, graphviz wheels). Writes $OUT/log.txt and
# $OUT/results.tgz (every step's logs and JSON: the device tool brings back at most 8 files).
# Usage: run_s10.sh STEP... with STEP one of
#   gpu      the GPU test files (litmus harness, Hopper forms, kernels; new ones when present)
#   kernels  ptxmm crossval examples/kernels/*.cu (1 s each)
#   hopper   ptxmm crossval examples/hopper/*.ptx (1 s each) and examples/hopper/kernels/*.cu
#   heavy    the broken kernels and Hopper variants under --stress heavy (2 s each)
#   SCRIPT   any other word: bash SCRIPT (a helper's script, e.g. benchmarks/device/run_s10_tensor.sh)
set -u
LOG=$OUT/log.txt; OUT=$OUT/w; mkdir -p $OUT; export OUT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -1;
  python3 -c "import cupy; print('cupy', cupy.__version__)"; git log -1 --oneline 2>/dev/null; } >> $LOG 2>&1
P="python3 -m ptxmm"
for step in "$@"; do
  t0=$(date +%s)
  case $step in
    gpu)
      gt=$(ls tests/test_device*_gpu.py)
      timeout 150 python3 -m pytest -q $gt -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1
      echo "gpu exit $?: $(tail -1 $OUT/gpu_tests.txt)" >> $LOG ;;
    kernels)
      timeout 150 $P crossval examples/kernels/*.cu --no-self-check --budget 1 --timeout 20 \
        --json $OUT/kernels-crossval.json > $OUT/kernels.log 2>&1; echo "kernels exit $?" >> $LOG ;;
    hopper)
      timeout 150 $P crossval examples/hopper/*.ptx --budget 1 --timeout 15 \
        --json $OUT/hopper-crossval.json > $OUT/hopper.log 2>&1; echo "hopper exit $?" >> $LOG
      # not the tensor load with a plain arrive: its threads may exit while its copy still writes their
      # CTA's shared memory (which another launch on that SM may own by then)
      hk=$(ls examples/hopper/kernels/*.cu | grep -v tma-tensor-load-2d-no-expect-tx)
      timeout 120 $P crossval $hk --no-self-check --budget 1 --timeout 20 \
        --json $OUT/hopper-kernels-crossval.json >> $OUT/hopper.log 2>&1; echo "hopper kernels exit $?" >> $LOG ;;
    heavy)
      K=examples/kernels; H=examples/hopper
      timeout 120 $P crossval $K/mp-relaxed-flag.cu $K/spinlock-relaxed-cas.cu $K/spinlock-relaxed-unlock.cu \
        $K/grid-barrier-no-fence.cu $K/lookback-two-words-no-fence.cu $K/syncthreads-exchange-no-barrier.cu \
        $H/pipeline-tma-async-no-consumer-fence.ptx $H/cluster-mbarrier-init-no-fence.ptx \
        --no-self-check --stress heavy --budget 2 --timeout 20 --json $OUT/heavy.json > $OUT/heavy.log 2>&1
      echo "heavy exit $?" >> $LOG ;;
    *)
      timeout 200 bash "$step" >> $LOG 2>&1; echo "$step exit $?" >> $LOG ;;
  esac
  echo "step $step: $(( $(date +%s) - t0 )) s" >> $LOG
done
echo done >> $LOG
tar czf $OUT/../results.tgz -C $OUT . && rm -rf $OUT

#!/bin/bash
# Session 9 (cover4), device calls 3 and 4: a run of the runner's 559 H100 tests (the 44 unseen so
# far first), 5 s of replay per test at most, cycling 0.25 s slices of environments. Call 3 (plan
# 6, one cubin per test): runner-cuda12; call 2's most productive runner-random draw as fixed knobs;
# runner-random (a fresh draw per slice); two large grids; runner-cuda12 with memory stress, adjacent
# lanes and random CTA distance. Call 4 (plan 8, the documented run): call 3's plan less one large
# grid, plus the CUDA 13 environments that had shown the block-scope-access tests call 3 missed
# (barrier with memory stress, runner with memory stress) and barrier assembled by CUDA 12.9's ptxas.
# Needs in the staged copy's root (git-ignored): out/rf, out/allowed.json, out/order559.txt,
# ptxas129.xz, and ../.whl. Usage: run_c4c.sh PLAN(6|8) [DEADLINE [TESTS]]. Writes to $OUT.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ../.whl/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('ptxas129.xz'), open('/tmp/ptxas129', 'wb'))" || exit 1
chmod +x /tmp/ptxas129 && export PTXMM_PTXAS_129=/tmp/ptxas129
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -1; } > $OUT/log.txt 2>&1
E=runner-cuda12
W="$E:threads=64/barrier_pct=2/pre_stress=74/warp_gap=4/stress_blocks=128/stress_loops=184/stress_lines=13/stress_line_words=100"
ST=stress_blocks=64/stress_loops=64
if [ "$1" = 6 ]; then
  PLAN="$E@0.25,$W@0.25,runner-random@0.25,$E:blocks=1024/threads=256/barrier_pct=50@0.25"
  PLAN="$PLAN,$E:blocks=512/threads=256/stride=4@0.25,$E:warp_gap=1/stripe=0/$ST@0.25"
else
  PLAN="$E@0.25,barrier:$ST@0.25,$W@0.25,runner:warp_gap=1/stripe=0/$ST@0.25,$E:warp_gap=1/stripe=0/$ST@0.25"
  PLAN="$PLAN,runner-random@0.25,barrier:ptxas=129@0.25,$E:blocks=512/threads=256/stride=4@0.25"
fi
echo "plan $PLAN" >> $OUT/log.txt
timeout 575 python3 benchmarks/device/runner_coverage.py run out/rf --tests ${3:-out/order559.txt} --allowed out/allowed.json \
  --plan "$PLAN" --limit 5 --deadline ${2:-380} --out $OUT/run559.jsonl > $OUT/run559.log 2>&1
echo "run559 exit $?" >> $OUT/log.txt; head -1 $OUT/run559.log >> $OUT/log.txt; tail -2 $OUT/run559.log >> $OUT/log.txt
grep -c . $OUT/run559.jsonl >> $OUT/log.txt; echo done >> $OUT/log.txt

#!/bin/bash
# Session 9 (cover4), device call 3: the ONE documented run of the runner's 559 H100 tests (the 44
# unseen so far first), 5 s of replay per test at most, cycling 0.25 s slices of six environments
# that all compile to one cubin per test (runner-cuda12's code): runner-cuda12; call 2's most
# productive runner-random draw as fixed knobs; runner-random (a fresh draw per slice); two large
# grids; runner-cuda12 with memory stress, adjacent lanes and random CTA distance.
# Needs in the staged copy's root (git-ignored): out/rf, out/allowed.json, out/order559.txt,
# ptxas129.xz, and ../.whl. Usage: run_c4c.sh [DEADLINE [TESTS]]. Writes to $OUT.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ../.whl/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('ptxas129.xz'), open('/tmp/ptxas129', 'wb'))" || exit 1
chmod +x /tmp/ptxas129 && export PTXMM_PTXAS_129=/tmp/ptxas129
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -1; } > $OUT/log.txt 2>&1
E=runner-cuda12
PLAN="$E@0.25,$E:threads=64/barrier_pct=2/pre_stress=74/warp_gap=4/stress_blocks=128/stress_loops=184/stress_lines=13/stress_line_words=100@0.25"
PLAN="$PLAN,runner-random@0.25,$E:blocks=1024/threads=256/barrier_pct=50@0.25,$E:blocks=512/threads=256/stride=4@0.25"
PLAN="$PLAN,$E:warp_gap=1/stripe=0/stress_blocks=64/stress_loops=64@0.25"
echo "plan $PLAN" >> $OUT/log.txt
timeout 575 python3 benchmarks/device/runner_coverage.py run out/rf --tests ${2:-out/order559.txt} --allowed out/allowed.json \
  --plan "$PLAN" --limit 5 --deadline ${1:-380} --out $OUT/run559.jsonl > $OUT/run559.log 2>&1
echo "run559 exit $?" >> $OUT/log.txt; head -1 $OUT/run559.log >> $OUT/log.txt; tail -2 $OUT/run559.log >> $OUT/log.txt
grep -c . $OUT/run559.jsonl >> $OUT/log.txt; echo done >> $OUT/log.txt

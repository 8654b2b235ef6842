#!/bin/bash
# Issue 29 item 1 (cover): the runner's 559 H100 tests under preset runner-cuda12, in one device call.
# Needs (carried, git-ignored, in the staged copy's root): out/rf and out/allowed.json
# (runner_families.py gen out/rf --only out/all.txt; runner_coverage.py allowed out/rf --tests out/all.txt),
# out/order559.txt (the runner's H100-seen tests, the ones unseen so far first), out/explore6.txt,
# ptxas129.xz (xz of CUDA 12.9's ptxas: pip install nvidia-cuda-nvcc-cu12==12.9.86), and ../.whl
# (z3-solver, lark wheels). Usage: run_cover.sh EXPLORE_SECONDS RUN_DEADLINE [TESTS [PLAN]] (EXPLORE_SECONDS 0: no exploration). Writes to $OUT.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ../.whl/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('ptxas129.xz'), open('/tmp/ptxas129', 'wb'))" || exit 1
chmod +x /tmp/ptxas129 && export PTXMM_PTXAS_129=/tmp/ptxas129
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; nvcc --version | tail -1;
  /tmp/ptxas129 --version | tail -1; git log -1 --oneline 2>/dev/null; } >> $OUT/log.txt 2>&1
C="python3 benchmarks/device/runner_coverage.py"
[ "$1" != 0 ] && timeout 120 $C explore out/rf --tests out/explore6.txt --allowed out/allowed.json --seconds $1 --deadline 60 \
  --envs runner:ptxas=129,barrier:ptxas=129,runner-cuda12 --out $OUT/explore.jsonl >> $OUT/log.txt 2>&1
timeout $(( $2 + 150 )) $C run out/rf --tests ${3:-out/order559.txt} --allowed out/allowed.json --plan ${4:-runner-cuda12@5} \
  --limit 5 --deadline $2 --out $OUT/run559.jsonl > $OUT/run559.log 2>&1
tail -3 $OUT/run559.log; grep -c . $OUT/run559.jsonl; echo done >> $OUT/log.txt

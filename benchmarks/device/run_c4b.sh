#!/bin/bash
# Session 9 (cover4), device call 2: (1) the runner's isa2 binaries again with their 3-location
# parameter file (call 1 gave them 2-loc.txt: past their buffer); (2) an exploration of candidate
# environments on six of the 44 unseen tests (1 s each); (3) the 44 unseen, 5 s each, under the
# three environments that showed the most (runner_coverage.py run --plan auto:...).
# Needs in the staged copy's root (git-ignored): rsrc/, rbin/ (as run_c4a.sh), out/rf,
# out/allowed.json, out/unseen44.txt, out/unseen6.txt, out/isa2.txt, ptxas129.xz, and ../.whl.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ../.whl/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('ptxas129.xz'), open('/tmp/ptxas129', 'wb'))" || exit 1
chmod +x /tmp/ptxas129 && export PTXMM_PTXAS_129=/tmp/ptxas129
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -1; } > $OUT/log.txt 2>&1
R="python3 benchmarks/device/runner_binaries.py run rsrc rbin"
timeout 40 $R --tests out/isa2.txt --mode p129 --seconds 10 --out $OUT/runner-bin.jsonl >> $OUT/log.txt 2>&1
timeout 25 $R --tests out/isa2.txt --mode cu13 --seconds 5 --out $OUT/runner-bin.jsonl >> $OUT/log.txt 2>&1
C="python3 benchmarks/device/runner_coverage.py"
E=runner-cuda12
timeout 150 $C explore out/rf --tests out/unseen6.txt --allowed out/allowed.json --seconds 1 --deadline 120 \
  --envs "runner-random,$E:blocks=1024/threads=256,$E:blocks=1024/threads=256/barrier_pct=50,$E:blocks=512/threads=256/stride=4,$E" \
  --out $OUT/explore.jsonl >> $OUT/log.txt 2>&1
timeout 330 $C run out/rf --tests out/unseen44.txt --allowed out/allowed.json \
  --plan "auto:$OUT/explore.jsonl:3:0.5:runner-random" --limit 5 --deadline 300 --out $OUT/run44.jsonl > $OUT/run44.log 2>&1
echo "run44 exit $?" >> $OUT/log.txt; tail -2 $OUT/run44.log >> $OUT/log.txt; echo done >> $OUT/log.txt

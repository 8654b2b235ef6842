#!/bin/bash
# Session 8's device call (lead): after the merges, in one call —
#  1. ptxmm crossval of every kernel in examples/kernels (the three loaded-address kernels new);
#  2. ptxmm crossval of every Hopper example (the new forms: run, or refused with their reason);
#  3. the 45 runner tests still unseen (docs/device/coverage.md) under runner-cuda12 with the
#     placement knobs not tried yet (warp_gap, coalesce, smaller blocks), 5 s per test.
# Needs in the staged copy's root (git-ignored): out/rf, out/allowed.json, out/unseen45.txt (see
# run_cover.sh), ptxas129.xz, and ../.whl (z3-solver, lark wheels). Writes to $OUT.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ../.whl/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -1; } > $OUT/log.txt 2>&1
P="python3 -m ptxmm"
timeout 170 $P crossval examples/kernels/*.cu --no-self-check --budget 2 --timeout 15 \
  --json $OUT/kernels-crossval.json > $OUT/kernels.log 2>&1; echo "kernels exit $?" >> $OUT/log.txt
timeout 100 $P crossval examples/hopper/*.ptx --budget 1 --timeout 15 \
  --json $OUT/hopper3-crossval.json > $OUT/hopper.log 2>&1; echo "hopper exit $?" >> $OUT/log.txt
python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('ptxas129.xz'), open('/tmp/ptxas129', 'wb'))" || exit 1
chmod +x /tmp/ptxas129 && export PTXMM_PTXAS_129=/tmp/ptxas129
R=runner-cuda12
timeout 290 python3 benchmarks/device/runner_coverage.py run out/rf --tests out/unseen45.txt --allowed out/allowed.json \
  --plan "$R:warp_gap=1@1.25,$R:coalesce=1@1.25,$R:threads=64/warp_gap=1@1.25,$R:warp_gap=8@1.25" \
  --limit 5 --deadline 230 --out $OUT/run45.jsonl > $OUT/run45.log 2>&1; echo "run45 exit $?" >> $OUT/log.txt
tail -3 $OUT/run45.log >> $OUT/log.txt; echo done >> $OUT/log.txt

#!/bin/bash
# Issue 29 item 1, one device call: the public CUDA runner's families on the H100.
# Needs (carried, git-ignored): .whl (z3-solver, lark, graphviz wheels), out/rf (runner_families.py gen
# out/rf --only out/seen.txt), out/allowed.json (runner_coverage.py allowed), out/seen.txt,
# out/explore.txt. Usage: run_i29.sh STEP... with STEP gpu (the GPU tests), sass, "explore|ENVS|SECONDS|DEADLINE" or "run|PLAN|DEADLINE|FILE[|TESTS]". Writes to $OUT.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee -a $OUT/log.txt
git log -1 --oneline | tee -a $OUT/log.txt
C="python3 benchmarks/device/runner_coverage.py"
for step in "$@"; do
  case $step in
    explore*)
      IFS="|" read -r _ envs secs dl <<< "$step"
      timeout $((dl + 30)) $C explore out/rf --tests out/explore.txt --allowed out/allowed.json \
        --envs "$envs" --seconds $secs --deadline $dl --out $OUT/explore.jsonl 2>&1 | tail -200 >> $OUT/log.txt ;;
    run*)
      IFS="|" read -r _ plan dl file tests <<< "$step"
      timeout $((dl + 40)) $C run out/rf --tests ${tests:-out/seen.txt} --allowed out/allowed.json --plan "$plan" \
        --limit 5 --deadline $dl --append --out $OUT/$file 2>&1 | tail -600 >> $OUT/log.txt ;;
    gpu)
      timeout 90 python3 -m pytest -q -m gpu tests/test_device_gpu.py -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1
      tail -3 $OUT/gpu_tests.txt >> $OUT/log.txt ;;
    sass)
      timeout 60 python3 - >> $OUT/sass.txt 2>&1 <<'PY'
import subprocess, ptxmm
from ptxmm.device.layout import make_layout
from ptxmm.device.codegen import generate
from ptxmm.device.build import compile_cubin
p = ptxmm.load("out/rf/wwc_TB_01_2_SCOPE_DEVICE_FENCE_SCOPE_BLOCK_BOTH_FENCE.ptx")
for fused in (False, True):
    cub = compile_cubin(generate(make_layout(p), fused=fused))
    sass = subprocess.run(["cuobjdump", "-sass", "-fun", "ptxmm_litmus", str(cub)], capture_output=True, text=True).stdout
    print("== fused" if fused else "== unfused", "\n".join(l for l in sass.splitlines() if any(k in l for k in ("LDG", "STG", "MEMBAR", "BRA", "BRX", "ATOM", "CCTL", "FENCE"))))
PY
      ;;
  esac
  tail -3 $OUT/log.txt
done
echo done | tee -a $OUT/log.txt

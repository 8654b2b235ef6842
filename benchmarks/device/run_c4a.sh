#!/bin/bash
# Session 9 (cover4), device call 1: the public runner's own binaries on the H100 (runner_binaries.py).
# Needs in the staged copy's root (git-ignored, never committed): rsrc/ (reeselevine/cuda-litmus's
# runner.cu, litmus.cuh, functions.cu, kernels/, params/), rbin/ (runner_binaries.py build ... --mode
# cu13 and --mode p129: built with nvcc 13.0.88 and CUDA 12.9's ptxas on the CPU machine),
# out/ctl2.txt (two controls ptxmm sees), out/unseen6.txt (six of the 44 unseen). Writes to $OUT.
set -u
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nvcc --version | tail -1; } > $OUT/log.txt 2>&1
B=rbin/wrc_TB_1_02_SCOPE_DEVICE_FENCE_SCOPE_BLOCK_THREAD_1_FENCE-p129
cuobjdump -sass $B | grep -B6 -A6 'MEMBAR' > $OUT/sass-p129-wrc-1_02.txt 2>&1
R="python3 benchmarks/device/runner_binaries.py run rsrc rbin"
timeout 60 $R --tests out/ctl2.txt --mode p129 --seconds ${1:-5} --out $OUT/runner-bin.jsonl >> $OUT/log.txt 2>&1
timeout 60 $R --tests out/ctl2.txt --mode cu13 --seconds ${1:-5} --out $OUT/runner-bin.jsonl >> $OUT/log.txt 2>&1
timeout 260 $R --tests out/unseen6.txt --mode p129 --seconds ${2:-30} --out $OUT/runner-bin.jsonl >> $OUT/log.txt 2>&1
timeout 120 $R --tests out/unseen6.txt --mode cu13 --seconds ${3:-10} --out $OUT/runner-bin.jsonl >> $OUT/log.txt 2>&1
echo done >> $OUT/log.txt

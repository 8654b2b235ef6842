#!/bin/bash
# Issue 14, second call: weak outcomes/s before (772da46, its `barrier` preset) and after (`barrier`,
# `tight`) for MP, SB, LB, IRIW relaxed in one run; the before rows bracket the after rows.
set -u
export PYTHONPATH=$PWD/src:$PWD/build/devdeps PTXMM_CACHE=$PWD/build/cache PYTHONUNBUFFERED=1
mkdir -p $OUT/a
T=MP-relaxed,SB-relaxed,LB-relaxed,IRIW-relaxed
OLD="cd build/before772 && PYTHONPATH=\$PWD/src:$PWD/build/devdeps python ../../benchmarks/device/targets.py sb --tests $T"
timeout 45 bash -c "$OLD --label before --envs barrier --out $OUT/a" 2>&1 | grep '^|' | tee $OUT/log.txt
timeout 90 python benchmarks/device/targets.py sb --tests $T --label after --envs barrier,tight --repeat 2 \
  --out $OUT/a 2>&1 | grep '^|' | tee -a $OUT/log.txt
timeout 30 bash -c "$OLD --label before-again --envs barrier --out $OUT/a" 2>&1 | grep '^|' | tee -a $OUT/log.txt
# the three family variants the first call's 2.5 s hunt did not reach (interrupted)
mkdir -p $OUT/c
timeout -s INT 25 python -m ptxmm crossval build/fam/WRWp2W-01.ptx build/fam/WRWp2W-04.ptx build/fam/WRWp2W-10.ptx \
  --budget 0.2 --hunt --hunt-budget 2.5 --no-self-check --json $OUT/c/cov3.json > $OUT/c/cov3.txt 2>&1
tail -2 $OUT/c/cov3.txt | tee -a $OUT/log.txt

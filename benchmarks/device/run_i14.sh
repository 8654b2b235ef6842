#!/bin/bash
# Issue 14's three targets in one device call (see benchmarks/device/targets.py, families.py).
# Needs: build/devdeps (CuPy), build/cache (cubins compiled here: PTXMM_CACHE), build/before772
# (`git archive 772da46 src examples/classic grammar models`), build/fam (families.py build/fam
# plus across.txt: the variants across CTAs whose weak outcome the model allows). Writes to $OUT.
set -u
export PYTHONPATH=$PWD/src:$PWD/build/devdeps PTXMM_CACHE=$PWD/build/cache PYTHONUNBUFFERED=1
DEPS=$PWD/build/devdeps
mkdir -p $OUT/a $OUT/b1 $OUT/b2 $OUT/c
trap 'cd $OUT && tar czf all.tgz a b1 b2 c && rm -rf a b1 b2 c' EXIT  # at most 8 files come back
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee $OUT/log.txt
B="python benchmarks/device/targets.py"
# the 'before' rows: `timeout old ...` could not run a shell function (so the first call of
# the first call's log has none); run_i14b.sh takes them through bash -c
OLD="cd build/before772 && PYTHONPATH=\$PWD/src:$DEPS python ../../benchmarks/device/targets.py"
# (b) check-kernel styles and grid knobs, 2-thread tests under none
timeout 60 $B check --exchange none,perm,all --envs none --out $OUT/b1 2>&1 | tail -12 | tee -a $OUT/log.txt
timeout 50 $B check --exchange all --envs none:reps=8,none:iters_per_graph=50,none:blocks=2048 \
  --out $OUT/b2 2>&1 | tail -14 | tee -a $OUT/log.txt
# (a) SB+relaxed: before (772da46, its barrier preset) and after, one run
timeout 30 bash -c "$OLD sb --label before --envs barrier --out $OUT/a" 2>&1 | tail -1 | tee -a $OUT/log.txt
timeout 80 $B sb --label after --repeat 3 --envs barrier,barrier:reps=2,barrier:reps=8,barrier:blocks=256,\
barrier:blocks=256/reps=8,barrier:threads=512,barrier:iters_per_graph=50 --out $OUT/a 2>&1 | tail -20 | tee -a $OUT/log.txt
timeout 30 bash -c "$OLD sb --label before2 --envs barrier --out $OUT/a" 2>&1 | tail -1 | tee -a $OUT/log.txt
# (c) family coverage: 1 s per test (0.4 s barrier + 0.6 s hunt), then 2.5 s of hunting on what stays unseen
timeout -s INT 200 python -m ptxmm crossval $(cat build/fam/across.txt) --budget 0.4 --hunt --hunt-budget 0.6 \
  --no-self-check --json $OUT/c/cov1.json > $OUT/c/cov1.txt 2>&1; tail -3 $OUT/c/cov1.txt | tee -a $OUT/log.txt
python benchmarks/families.py unseen $OUT/c/cov1.json > $OUT/c/left.txt; wc -l $OUT/c/left.txt | tee -a $OUT/log.txt
timeout -s INT 90 python -m ptxmm crossval $(cat $OUT/c/left.txt) --budget 0.2 --hunt --hunt-budget 2.5 --no-self-check \
  --json $OUT/c/cov2.json > $OUT/c/cov2.txt 2>&1; tail -3 $OUT/c/cov2.txt | tee -a $OUT/log.txt
# SASS with this machine's cuobjdump, for comparison with the decoding done elsewhere
timeout 20 python - > $OUT/c/sass.txt 2>&1 <<'PY'
import subprocess, ptxmm
from ptxmm.device.layout import make_layout
from ptxmm.device.codegen import generate
from ptxmm.device.build import compile_cubin
for f in ("SB-09", "MP-07", "WRC-10", "SB-05"):
    cub = compile_cubin(generate(make_layout(ptxmm.load(f"build/fam/{f}.ptx"))))
    print("==", f, subprocess.run(["cuobjdump", "-sass", str(cub)], capture_output=True, text=True).stdout)
PY
echo done | tee -a $OUT/log.txt

#!/bin/bash
# The lead's timing calls of session 20 on the device machine: the done-when figures of issue 41 (the
# enumeration rows, start-up, explain and graph of every bundled example) and of issue 40 (the grid
# barrier at 12 and 16 blocks) under z3-solver 4.16, one process at a time except `every`.
# Needs (carried, git-ignored): .whl (the wheels: z3-solver 4.16.0, lark, click, rich, networkx, python-sat);
# for camp, .mg/herd7.tgz.
# Usage: run_s20_timing.sh STEP...   STEP: core | enum | cts | targets | camp | every
#   core   start-up (bench_startup.py --runs 20), the enumeration rows (3 runs each), the grid barrier at
#          12 and 16 blocks (`check --timeout 120`), one process at a time
#   enum   the enumeration rows alone (3 runs each)
#   cts    explain and graph of the four cub-tile-state kernels and block-reduce-shfl, one at a time
#   targets issue 40's targets (histogram 128, exchange 1024, block-reduce-shfl <<<2, 64>>>, grid 16)
#   camp   bench_campaigns.py --size 6 --models sc --cli-only: ptxmm test -j1/-j2 against herd7
#   every  bench_explain.py --compare --no-fix over every bundled example, in 12 shards side by side
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  > $OUT/pip.txt 2>&1 || { cat $OUT/pip.txt; exit 1; }
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
{ lscpu | grep -E "Model name|^CPU\(s\)|Thread"; python3 --version; nproc; python3 -c "import z3; print('z3', z3.get_version_string())"; } >> $OUT/log.txt 2>&1
KERNELS="cub-tile-state-unpacked cub-tile-state-unpacked-no-fence cub-tile-state-packed cub-tile-state-packed-acqrel block-reduce-shfl"
grid() { python3 -c "import sys; sys.path.insert(0, 'benchmarks'); import bench_kernels as b; print(b._grid($1)[$2])"; }
T() { /usr/bin/time -f "$1: %U+%S s cpu, %e s wall, %M KB" "${@:2}" > /dev/null 2>> $OUT/alone.txt; }
enum() { python3 benchmarks/device/enum_rows.py "$1"; }
step() {
  local step=$1 t0=$(date +%s)
  case $step in
    core)
      L='import sys; import ptxmm.kernel.launch as L; L.MAX_THREADS = 1 << 30; from ptxmm.cli.main import main; sys.argv[0] = "ptxmm"; main()'
      env -u PYTHONDONTWRITEBYTECODE python3 -m compileall -q src /tmp/site > /dev/null 2>&1
      timeout 100 python3 benchmarks/bench_startup.py --runs 20 > $OUT/startup.txt 2>&1
      for i in 1 2 3; do enum "run$i" >> $OUT/alone.txt 2>&1; done
      for n in 12 16; do
        T grid-barrier-$n timeout 150 python3 -c "$L" check --json --timeout 120 --launch "$(grid $n 0)" --forall "$(grid $n 1)" examples/kernels/grid-barrier.ptx
      done ;;
    enum)
      for i in 1 2 3; do enum "run$i" >> $OUT/alone.txt 2>&1; done ;;
    cts)
      K=examples/kernels
      for k in $KERNELS; do f=$(ls $K/real/$k.cu $K/$k.cu 2>/dev/null | head -1); python3 -m ptxmm check $f > /dev/null 2>&1; done
      for k in $KERNELS; do f=$(ls $K/real/$k.cu $K/$k.cu 2>/dev/null | head -1)
        for c in explain graph; do T "$c $k" timeout 200 python3 -m ptxmm $c $f; done; done ;;
    targets)  # issue 40's scale targets alone, this tree only (bench_kernels' scale cells: CPU s, wall s, MiB)
      python3 - > $OUT/targets.txt 2>&1 <<'PY'
import sys
sys.path.insert(0, "benchmarks")
import bench_kernels as b
for kernel, size in (("histogram", 128), ("syncthreads-exchange", 1024), ("block-reduce-shfl", (2, 64)),
                     ("grid-barrier", 16)):
    stem, sizes, make, targets = b.SCALE[kernel]
    launch, cond = make(size)
    c = b._scale_cell(b.ROOT / "src", b.KDIR / f"{stem}.ptx", launch, cond, 120)
    print(f"{kernel:22s} {str(size):>8s} {b._fmt_cell(c)}  target {targets[size]:g} s, 2 GB", flush=True)
PY
      ;;
    camp)  # ptxmm test -j1 / -j2 against herd7 -j1 on gen --size 6 SC tests (.mg/herd7.tgz: herd7 7.58 built
           # by ../shared/tools/build-herd7.sh, with its libgmp)
      mkdir -p ~/.local && tar xzf .mg/herd7.tgz -C ~/.local
      LD_LIBRARY_PATH=$HOME/.local/herd7/bin timeout 400 python3 benchmarks/bench_campaigns.py --size 6 --repeat 3 \
        --models sc --cli-only > $OUT/campaigns.txt 2>&1 ;;
    every)
      for k in 0 1 2 3 4 5 6 7 8 9 10 11; do
        timeout ${EVERY_LIMIT:-500} python3 benchmarks/bench_explain.py --compare --no-fix --shard $k/12 > $OUT/explain-$k.txt 2>&1 &
      done; wait; cat $OUT/explain-?.txt $OUT/explain-??.txt > $OUT/explain-all.txt; rm -f $OUT/explain-?.txt $OUT/explain-??.txt ;;
  esac
  echo "$step: $(( $(date +%s) - t0 )) s" >> $OUT/log.txt
}
for s in "$@"; do step $s; done
rm -f $OUT/pip.txt
grep -v "outcome(s) found" $OUT/alone.txt > $OUT/alone2.txt 2>/dev/null && mv $OUT/alone2.txt $OUT/alone.txt
exit 0

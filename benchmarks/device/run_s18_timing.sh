#!/bin/bash
# The lead's timing calls of session 18: the done-when figures of issues 40 and 41 on the device machine's idle
# cores (its 16 CPUs share physical cores, so the figures of record are taken one process at a time).
# Needs (carried, git-ignored): .whl (the wheels), .mg/base-e15f4c3.tgz (src/models/grammar of this session's base)
# and .mg/before-ca6d426.tgz (the scale table's before tree).
# Usage: run_s18_timing.sh STEP...   STEP: alone (= core, then cts) | core | cts | final
#   alone   one after another: start-up against the base, the enumeration rows (3 runs each, main and base
#           alternating), the grid barrier at 8, 12 and 16 blocks, the cub-tile-state explains and graphs
#   final   explain and graph of every bundled example in 12 shards side by side, beside the grid barrier's
#           scale table (before ca6d426 / after)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  > $OUT/pip.txt 2>&1 || { cat $OUT/pip.txt; exit 1; }
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
unpack() {  # $1 tgz, $2 directory beside the checkout
  [ -f "$1" ] && [ ! -d "$2" ] && mkdir -p "$2" && tar xzf "$1" -C "$2"
  return 0
}
unpack .mg/base-e15f4c3.tgz ../base-e15f4c3
unpack .mg/before-ca6d426.tgz ../scale-before-ca6d426
{ lscpu | grep -E "Model name|^CPU\(s\)"; python3 --version; } >> $OUT/log.txt 2>&1
CTS="cub-tile-state-unpacked cub-tile-state-unpacked-no-fence cub-tile-state-packed cub-tile-state-packed-acqrel"
grid() { python3 -c "import sys; sys.path.insert(0, 'benchmarks'); import bench_kernels as b; print(b._grid($1)[$2])"; }
enum() {  # $1: label, $2: src directory
  PYTHONPATH=$2:/tmp/site python3 benchmarks/device/enum_rows.py "$1"
}
step() {
  local step=$1 t0=$(date +%s)
  case $step in
    core)  # start-up, the enumeration rows (main and base alternating), the grid barrier at 8, 12 and 16 blocks
      ( T() { /usr/bin/time -f "$1: %U+%S s cpu, %e s wall, %M KB" "${@:2}" > /dev/null 2>> $OUT/alone.txt; }
        L='import sys; import ptxmm.kernel.launch as L; L.MAX_THREADS = 1 << 30; from ptxmm.cli.main import main; sys.argv[0] = "ptxmm"; main()'
        env -u PYTHONDONTWRITEBYTECODE python3 -m compileall -q src ../base-e15f4c3/src /tmp/site > /dev/null 2>&1
        timeout 100 python3 benchmarks/bench_startup.py --runs 20 --base ../base-e15f4c3 > $OUT/startup.txt 2>&1
        for i in 1 2 3; do enum main $PWD/src >> $OUT/alone.txt 2>&1; enum base ../base-e15f4c3/src >> $OUT/alone.txt 2>&1; done
        for n in 8 12 16; do
          T grid-barrier-$n timeout 150 python3 -c "$L" check --json --timeout 120 --launch "$(grid $n 0)" --forall "$(grid $n 1)" examples/kernels/grid-barrier.ptx
        done ) ;;
    cts)  # the four cub-tile-state kernels' explain and graph, one process at a time (the nvcc compile cached first)
      ( T() { /usr/bin/time -f "$1: %U+%S s cpu, %e s wall, %M KB" "${@:2}" > /dev/null 2>> $OUT/alone.txt; }
        K=examples/kernels
        for k in $CTS; do python3 -m ptxmm check $K/real/$k.cu > /dev/null 2>&1; done
        for k in $CTS; do for c in explain graph; do T "$c $k" timeout 200 python3 -m ptxmm $c $K/real/$k.cu; done; done ) ;;
    alone)
      step core; step cts
      grep -v "outcome(s) found" $OUT/alone.txt > $OUT/alone2.txt; mv $OUT/alone2.txt $OUT/alone.txt
      rm -f $OUT/pip.txt ;;
    final)
      timeout 440 python3 benchmarks/bench_kernels.py --scale --only grid-barrier --scale-timeout 60 > $OUT/scale.txt 2>&1 &
      for k in 0 1 2 3 4 5 6 7 8 9 10 11; do
        timeout 440 python3 benchmarks/bench_explain.py --compare --no-fix --shard $k/12 > $OUT/explain-$k.txt 2>&1 &
      done; wait; cat $OUT/explain-?.txt $OUT/explain-??.txt > $OUT/explain-all.txt
      rm -f $OUT/explain-?.txt $OUT/explain-??.txt $OUT/pip.txt ;;
  esac
  echo "$step: $(( $(date +%s) - t0 )) s" >> $OUT/log.txt
}
for s in "$@"; do step $s; done

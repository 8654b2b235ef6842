#!/bin/bash
# The lead's timing calls of session 17: the done-when figures of issues 40 and 41 on the device machine's
# idle cores (its 16 CPUs share physical cores, so the figures of record are taken one process at a time).
# Needs (carried, git-ignored): .whl (the wheels), .mg/base-dc41d0e.tgz (src/models/grammar of this session's
# base, for before/after in one run), .mg/before-ca6d426.tgz (the scale table's before tree, the same parts).
# Usage: run_s17_timing.sh STEP...   STEP: alone | scale | base-explain | scale+base | final
#   alone         one after another: start-up against the base (bench_startup.py), the enumeration rows,
#                 the grid barrier at 8 and 16 blocks, the cub-tile-state explains and graphs, the scale targets
#   scale         benchmarks/bench_kernels.py --scale (before ca6d426 / after), one process per kernel side by side
#   base-explain  the base tree's explain and graph of the four cub-tile-state kernels (one process)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  > $OUT/pip.txt 2>&1 || { cat $OUT/pip.txt; exit 1; }
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
unpack() {  # $1 tgz, $2 directory beside the checkout
  [ -f "$1" ] && [ ! -d "$2" ] && mkdir -p "$2" && tar xzf "$1" -C "$2"
  return 0
}
unpack .mg/base-dc41d0e.tgz ../base-dc41d0e
unpack .mg/before-ca6d426.tgz ../scale-before-ca6d426
{ lscpu | grep -E "Model name|^CPU\(s\)"; python3 --version; git log --oneline -1 2>/dev/null; } >> $OUT/log.txt 2>&1
CTS="cub-tile-state-unpacked cub-tile-state-unpacked-no-fence cub-tile-state-packed cub-tile-state-packed-acqrel"
grid() { python3 -c "import sys; sys.path.insert(0, 'benchmarks'); import bench_kernels as b; print(b._grid($1)[$2])"; }
step() {
  local step=$1 t0=$(date +%s)
  case $step in
    alone)
      ( T() { /usr/bin/time -f "$1: %U+%S s cpu, %e s wall, %M KB" "${@:2}" > /dev/null 2>> $OUT/alone.txt; }
        L='import sys; import ptxmm.kernel.launch as L; L.MAX_THREADS = 1 << 30; from ptxmm.cli.main import main; sys.argv[0] = "ptxmm"; main()'
        K=examples/kernels
        env -u PYTHONDONTWRITEBYTECODE python3 -m compileall -q src ../base-dc41d0e/src /tmp/site > /dev/null 2>&1
        timeout 200 python3 benchmarks/bench_startup.py --runs 20 --base ../base-dc41d0e > $OUT/startup.txt 2>&1
        bash benchmarks/device/run_s16_timing.sh enum > /dev/null 2>&1; cat $OUT/enum.txt >> $OUT/alone.txt
        for n in 8 16; do
          T grid-barrier-$n timeout 150 python3 -c "$L" check --json --timeout 120 --launch "$(grid $n 0)" --forall "$(grid $n 1)" $K/grid-barrier.ptx
        done
        for k in $CTS; do for c in explain graph; do T "$c $k" timeout 200 python3 -m ptxmm $c $K/real/$k.cu; done; done
        T exchange-1024 python3 -c "$L" check --json --launch "exchange<<<1, 1024>>>(int out[1024])" --forall "out[0] == 2 && out[1023] == 1" $K/syncthreads-exchange.ptx
        T histogram-128 python3 -c "$L" check --json --launch "$(python3 -c 'import sys; sys.path.insert(0, "benchmarks"); import bench_kernels as b; print(b._hist(128)[0])')" --forall "$(python3 -c 'import sys; sys.path.insert(0, "benchmarks"); import bench_kernels as b; print(b._hist(128)[1])')" $K/histogram.ptx
        T block-reduce-2x64 python3 -m ptxmm check --json $K/block-reduce-shfl.ptx )
      grep -v "outcome(s) found" $OUT/alone.txt > $OUT/alone2.txt; mv $OUT/alone2.txt $OUT/alone.txt
      rm -f $OUT/pip.txt $OUT/enum.txt ;;
    scale)
      for k in histogram grid-barrier syncthreads-exchange block-reduce-shfl; do
        timeout 560 python3 benchmarks/bench_kernels.py --scale --only $k --scale-timeout 60 > $OUT/scale-$k.txt 2>&1 &
      done; wait; cat $OUT/scale-*.txt > $OUT/scale.txt; rm -f $OUT/scale-*.txt; echo "scale done" >> $OUT/log.txt ;;
    base-explain)
      for k in $CTS; do for c in explain graph; do
        PYTHONPATH=../base-dc41d0e/src:/tmp/site /usr/bin/time -f "base $c $k: %U+%S s cpu, %e s wall, %M KB" \
          timeout 200 python3 -m ptxmm $c examples/kernels/real/$k.cu > /dev/null 2>> $OUT/base-explain.txt
      done; done ;;
    final)  # after the last merges: the enumeration rows and the cub-tile-state explains alone, then explain and
            # graph of every bundled example in 12 shards side by side (their table: explain-all.txt)
      ( T() { /usr/bin/time -f "$1: %U+%S s cpu, %e s wall, %M KB" "${@:2}" > /dev/null 2>> $OUT/final.txt; }
        bash benchmarks/device/run_s16_timing.sh enum > /dev/null 2>&1; cat $OUT/enum.txt >> $OUT/final.txt
        for k in $CTS; do for c in explain graph; do T "$c $k" timeout 200 python3 -m ptxmm $c examples/kernels/real/$k.cu; done; done )
      for k in 0 1 2 3 4 5 6 7 8 9 10 11; do
        timeout 400 python3 benchmarks/bench_explain.py --compare --no-fix --shard $k/12 > $OUT/explain-$k.txt 2>&1 &
      done; wait; cat $OUT/explain-?.txt $OUT/explain-??.txt > $OUT/explain-all.txt
      grep -v "outcome(s) found\|Graphviz" $OUT/final.txt > $OUT/final2.txt; mv $OUT/final2.txt $OUT/final.txt
      rm -f $OUT/explain-?.txt $OUT/explain-??.txt $OUT/enum.txt $OUT/pip.txt ;;
    scale+base)
      step scale & step base-explain & wait ;;
  esac
  echo "$step: $(( $(date +%s) - t0 )) s" >> $OUT/log.txt
}
for s in "$@"; do step $s; done

#!/bin/bash
# The lead's timing calls (sessions 15 and 16): the CPU-side speed targets of issues 39-42 measured on the device
# machine's idle cores (16 cores; this repository's 2-core workstation was shared by eight jobs).
# Needs (carried, git-ignored): .whl (the wheels), .mg/herd7.tgz (~/.local/herd7 packed, herd7 built by
# ../shared/tools/build-herd7.sh). Writes to $OUT. Usage: run_s16_timing.sh STEP... with STEP one of
#   campaigns  benchmarks/bench_campaigns.py --size 6 --models sc (ptxmm -j1/-j2 against herd7 -j1)
#   enum       the enumeration rows: x1l3 under ptx (46,875 outcomes), x1l4 under sc (41,040)
#   real       benchmarks/bench_real.py (every real-library kernel under ptx and ptx-v7.5)
#   explain    benchmarks/bench_explain.py --compare --no-fix in 8 shards (explain and graph of every bundled example)
#   real+explain  the two at once
#   scale      benchmarks/bench_kernels.py --scale, one process per kernel side by side (before: ca6d426,
#              carried as .mg/before-ca6d426.tgz of its src/, unpacked where the script looks for it)
#   page       benchmarks/bench_page.py in 4 shards (what the playground does for every example)
#   second     scale, explain (10 shards) and page (2) side by side
#   alone      the done-when figures one after another, nothing else running; start-up
#   targets    each done-when figure alone, the cub-tile-state explains, page and explain shards 8-9
#   first      campaigns, enum, real and scale side by side
#   explain16  bench_explain.py --compare --no-fix in 12 shards (session 15 lost a shard's log with 8)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  > $OUT/pip.txt 2>&1 || { cat $OUT/pip.txt; exit 1; }
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
if [ -f .mg/herd7.tgz ]; then  # .mg/herd7.tgz: tar czf of ~/.local/herd7 (a stripped binary: the 64 MiB limit)
  mkdir -p $HOME/.local && rm -rf $HOME/.local/herd7 && tar xzf .mg/herd7.tgz -C $HOME/.local
  export HERDLIB=$HOME/.local/herd7/share/herdtools7/herd
fi
{ lscpu | grep -E "Model name|^CPU\(s\)"; python3 --version; $HOME/.local/herd7/bin/herd7 -version 2>&1 | head -1; } >> $OUT/log.txt 2>&1
step() {
  local step=$1 t0=$(date +%s)
  case $step in
    campaigns)
      timeout 400 python3 benchmarks/bench_campaigns.py --size 6 --quick --repeat 3 --models sc --jobs 1,2 \
        > $OUT/campaigns.txt 2>&1; echo "campaigns exit $?" >> $OUT/log.txt ;;
    enum)
      python3 - <<'PY' > $OUT/enum.txt 2>&1
import json, subprocess, sys, time, tempfile, os
sys.path.insert(0, "benchmarks")
import shapes
d = tempfile.mkdtemp()
for name, sh, model, n in (("x1l3", shapes.one_location(3), "ptx", 46875), ("x1l4", shapes.one_location(4), "sc", 41040)):
    f = os.path.join(d, name + ".ptx"); open(f, "w").write(sh.ptx())
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "ptxmm", "check", f, "--model", model, "--max-outcomes", "1000000",
                        "--json"], capture_output=True, text=True, timeout=200)
    w = time.perf_counter() - t
    j = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    print(f"{name} {model}: {w:.2f} s wall, n_outcomes {j.get('n_outcomes')} (expected {n}), "
          f"{1000 * w / max(1, j.get('n_outcomes') or 1):.3f} ms/outcome, status {j.get('status')}")
PY
      echo "enum exit $?" >> $OUT/log.txt ;;
    real)
      timeout 500 python3 benchmarks/bench_real.py --repeat 1 > $OUT/real.txt 2>&1; echo "real exit $?" >> $OUT/log.txt ;;
    explain)  # 8 shards side by side (16 cores), each file's explain and graph timed in-process
      for k in 0 1 2 3 4 5 6 7; do
        timeout 480 python3 benchmarks/bench_explain.py --compare --no-fix --shard $k/8 > $OUT/explain-$k.txt 2>&1 &
      done; wait; echo "explain done" >> $OUT/log.txt ;;
    real+explain)  # both at once: bench_real is one core
      step real & step explain & wait ;;
    scale)
      if [ -f .mg/before-ca6d426.tgz ] && [ ! -d ../scale-before-ca6d426 ]; then
        mkdir -p ../scale-before-ca6d426 && tar xzf .mg/before-ca6d426.tgz -C ../scale-before-ca6d426
      fi
      for k in histogram grid-barrier syncthreads-exchange block-reduce-shfl; do
        timeout 540 python3 benchmarks/bench_kernels.py --scale --only $k --scale-timeout 60 > $OUT/scale-$k.txt 2>&1 &
      done; wait; echo "scale done" >> $OUT/log.txt ;;
    page)
      for k in 0 1 2 3; do
        timeout 500 python3 benchmarks/bench_page.py --shard $k/4 > $OUT/page-$k.txt 2>&1 &
      done; wait; echo "page done" >> $OUT/log.txt ;;
    explain16)
      for k in 0 1 2 3 4 5 6 7 8 9 10 11; do
        timeout 540 python3 benchmarks/bench_explain.py --compare --no-fix --shard $k/12 > $OUT/explain-$k.txt 2>&1 &
      done; wait; echo "explain done" >> $OUT/log.txt ;;
    scale+page)
      step scale & step page & wait ;;
    second)  # the scale table, explain in 10 shards and the page in 2, side by side (16 processes)
      step scale & (for k in 0 1 2 3 4 5 6 7 8 9; do
        timeout 560 python3 benchmarks/bench_explain.py --compare --no-fix --shard $k/10 > $OUT/explain-$k.txt 2>&1 &
      done; wait) & (for k in 0 1; do
        timeout 560 python3 benchmarks/bench_page.py --shard $k/2 > $OUT/page-$k.txt 2>&1 &
      done; wait) & wait ;;
    alone)  # the done-when figures one after another, nothing else running (the machine's 16 CPUs share cores:
            # side by side, each process's CPU seconds grow); start-up with the bytecode compiled first
      ( T() { /usr/bin/time -f "$1: %U+%S s cpu, %e s wall, %M KB" "${@:2}" > /dev/null 2>> $OUT/alone.txt; }
        L='import sys; import ptxmm.kernel.launch as L; L.MAX_THREADS = 1 << 30; from ptxmm.cli.main import main; sys.argv[0] = "ptxmm"; main()'
        K=examples/kernels
        env -u PYTHONDONTWRITEBYTECODE python3 -m compileall -q src /tmp/site > /dev/null 2>&1
        for i in 1 2 3 4 5 6 7 8 9 10; do env -u PYTHONDONTWRITEBYTECODE /usr/bin/time -f "startup: %e s wall, %U+%S s cpu" python3 -m ptxmm check examples/mp-release-acquire.ptx > /dev/null 2>> $OUT/alone.txt; done
        T exchange-1024 python3 -c "$L" check --json --launch "exchange<<<1, 1024>>>(int out[1024])" --forall "out[0] == 2 && out[1023] == 1" $K/syncthreads-exchange.ptx
        for m in ptx ptx-v7.5; do T cub-tile-state-unpacked-$m python3 -m ptxmm check --json --model $m $K/real/cub-tile-state-unpacked.cu; done
        T block-reduce-2x64 python3 -m ptxmm check --json $K/block-reduce-shfl.ptx
        T explain-cub-tile-state-unpacked python3 -m ptxmm explain examples/kernels/real/cub-tile-state-unpacked.cu
        step enum; cat $OUT/enum.txt >> $OUT/alone.txt )
      grep -v "outcome(s) found" $OUT/alone.txt > $OUT/alone2.txt; mv $OUT/alone2.txt $OUT/alone.txt; rm -f $OUT/pip.txt ;;
    targets)  # each done-when figure alone in its process, 6 processes side by side; outputs joined (8 files come back)
      ( T() { /usr/bin/time -f "$1: %U+%S s cpu, %e s wall, %M KB" "${@:2}" > /dev/null 2>> $OUT/targets.txt; }
        L='import sys; import ptxmm.kernel.launch as L; L.MAX_THREADS = 1 << 30; from ptxmm.cli.main import main; sys.argv[0] = "ptxmm"; main()'
        K=examples/kernels
        T exchange-1024 python3 -c "$L" check --json --launch "exchange<<<1, 1024>>>(int out[1024])" --forall "out[0] == 2 && out[1023] == 1" $K/syncthreads-exchange.ptx
        T histogram-128 python3 -c "$L" check --json --launch "$(python3 -c 'import sys; sys.path.insert(0, "benchmarks"); import bench_kernels as b; print(b._hist(128)[0])')" --forall "$(python3 -c 'import sys; sys.path.insert(0, "benchmarks"); import bench_kernels as b; print(b._hist(128)[1])')" $K/histogram.ptx
        T block-reduce-2x64 python3 -m ptxmm check --json $K/block-reduce-shfl.ptx
        for n in 8 16; do
          T grid-barrier-$n timeout 150 python3 -c "$L" check --json --timeout 120 --launch "$(python3 -c "import sys; sys.path.insert(0, 'benchmarks'); import bench_kernels as b; print(b._grid($n)[0])")" --forall "$(python3 -c "import sys; sys.path.insert(0, 'benchmarks'); import bench_kernels as b; print(b._grid($n)[1])")" $K/grid-barrier.ptx
        done
        for m in ptx ptx-v7.5; do T cub-tile-state-unpacked-$m python3 -m ptxmm check --json --model $m $K/real/cub-tile-state-unpacked.cu; done ) &
      ( step enum ) &
      ( for k in cub-tile-state-unpacked cub-tile-state-unpacked-no-fence cub-tile-state-packed cub-tile-state-packed-acqrel; do
          for c in explain graph; do
            /usr/bin/time -f "$c $k: %U+%S s cpu, %e s wall, %M KB" timeout 200 python3 -m ptxmm $c examples/kernels/real/$k.cu > /dev/null 2>> $OUT/explain-cts.txt
          done; done ) &
      for k in 0 1; do timeout 500 python3 benchmarks/bench_page.py --shard $k/2 > $OUT/page-$k.txt 2>&1 & done
      for k in 8 9; do timeout 500 python3 benchmarks/bench_explain.py --compare --no-fix --shard $k/10 > $OUT/explain-$k.txt 2>&1 & done
      wait; cat $OUT/page-0.txt $OUT/page-1.txt > $OUT/page.txt; cat $OUT/explain-8.txt $OUT/explain-9.txt > $OUT/explain-89.txt
      rm -f $OUT/page-?.txt $OUT/explain-?.txt $OUT/pip.txt ;;
    first)  # campaigns, enum, real and the scale table side by side (about 10 of the 16 cores)
      step campaigns & step enum & step real & step scale & wait ;;
  esac
  echo "$step: $(( $(date +%s) - t0 )) s" >> $OUT/log.txt
}
for s in "$@"; do step $s; done

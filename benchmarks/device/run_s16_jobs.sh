#!/bin/bash
# Session 16 (issue 41, campaigns): `ptxmm test` -j1/-j2 before and after against herd7 -j1, and the
# start-up of a small check, on the device machine's idle cores. Run from a copy of the tree holding
# .whl (the wheels), .mg/herd7.tgz and, under .mg, this tree (jobs/) and the earlier one
# (jobs-before/: its src, models, grammar). Writes to $OUT.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  > $OUT/pip.txt 2>&1 || { cat $OUT/pip.txt; exit 1; }
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
mkdir -p $HOME/.local && rm -rf $HOME/.local/herd7 && tar xzf .mg/herd7.tgz -C $HOME/.local
export HERDLIB=$HOME/.local/herd7/share/herdtools7/herd
cd .mg/jobs
{ lscpu | grep -E "Model name|^CPU\(s\)"; python3 --version; } > $OUT/log.txt 2>&1
python3 - <<'PY' > $OUT/startup.txt 2>&1   # whole-process start-up of a small check, 20 runs each
import os, statistics, subprocess, sys, time
f = "examples/mp-relaxed-acquire.ptx"
for name, src in (("before", "../jobs-before/src"), ("after", "src")):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((src, os.environ["PYTHONPATH"])))
    cmd = [sys.executable, "-m", "ptxmm", "check", f]
    for _ in range(3):
        subprocess.run(cmd, env=env, capture_output=True)  # caches written
    ts = []
    for _ in range(20):
        t = time.perf_counter(); r = subprocess.run(cmd, env=env, capture_output=True); ts.append(time.perf_counter() - t)
    print(f"{name}: ptxmm check {f}: median {1000 * statistics.median(ts):.1f} ms, min {1000 * min(ts):.1f} ms "
          f"(20 runs, exit {r.returncode})")
PY
export PYTHONPATH=$PWD/src:/tmp/site
timeout 240 python3 benchmarks/bench_campaigns.py --size 6 --cli-only --repeat 1 --models sc --jobs 1,2 \
  --before ../jobs-before > $OUT/campaigns.txt 2>&1; echo "campaigns exit $?" >> $OUT/log.txt

#!/bin/bash
# Session 16 (issue 41.2): x1l3 under ptx and x1l4 under sc, whole `ptxmm check --max-outcomes 1000000`,
# on the device's idle cores. Needs (carried, git-ignored): .whl (the wheels) and .mg/enum: src (the
# branch's), benchmarks/shapes.py and pysat (python-sat's cp312 wheel unpacked, examples and allies
# removed: the 64 MiB limit). "before": the device checkout's own src. Runs side by side, one per core.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $OUT/pip.txt 2>&1 || { cat $OUT/pip.txt; exit 1; }
E=$PWD/.mg/enum
python3 --version; nproc
PYTHONPATH=$E/pysat:/tmp/site python3 -c "import pysat.solvers; print('pysat ok')"
for d in models grammar examples; do ln -sfn $PWD/$d $E/$d; done
cd $E
python3 - <<'PY'
import sys; sys.path.insert(0, "benchmarks"); import shapes
for n in (3, 4): open(f"/tmp/x1l{n}.ptx", "w").write(shapes.one_location(n).ptx())
PY
one() {  # name side file model
  local pp=$E/src:$E/pysat:/tmp/site; [ $2 = before ] && pp=$E/../../src:/tmp/site
  /usr/bin/time -f "$1 $2 cpu %U user %S sys %e wall" env PYTHONPATH=$pp PTXMM_CACHE=/tmp/pc timeout 60 python3 -m ptxmm check $3 --model $4 --max-outcomes 1000000 --json > $OUT/$1-$2.json 2> $OUT/$1-$2.err
  python3 -c "import json; j=json.load(open('$OUT/$1-$2.json')); print('$1 $2', j.get('n_outcomes'), j.get('status'), 'time_s', j.get('time_s'))"; tail -1 $OUT/$1-$2.err
}
for side in ${SIDES:-after}; do one x1l3 $side /tmp/x1l3.ptx ptx & one x1l4 $side /tmp/x1l4.ptx sc & done; wait

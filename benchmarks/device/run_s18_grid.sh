#!/bin/bash
# Issue 40, session 18: the grid barrier's scale rows on the device machine's idle cores, one process
# per (blocks, side) side by side: "after" (engines/z3/chains.VALUE_BOUNDS on) and "before" (off: the
# tree before the value bounds, every other line the same), benchmarks/profile_grid.py per N.
# Needs (carried, git-ignored): .whl (the wheels). Usage (from the tree's root, as the run tool does):
#   run_s18_grid.sh LIMIT_S "AFTER_NS" "BEFORE_NS"      writes $OUT/after.txt, $OUT/before.txt
set -u
LIMIT=${1:-120}; AFTER=${2:-"2 4 6 8 10 12 16"}; BEFORE=${3:-"2 4 6 8 10 12"}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  > $OUT/pip.txt 2>&1 || { cat $OUT/pip.txt; exit 1; }
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 PTXMM_CACHE=/tmp/ptxmm-cache
T=$(mktemp -d)
one() {  # side n
  local vb=1; [ "$1" = before ] && vb=0
  timeout "$LIMIT" python3 -c "
import runpy, sys
import ptxmm.engines.z3.chains as C
C.VALUE_BOUNDS = $vb == 1
sys.argv = ['profile_grid.py', '$2']
runpy.run_path('benchmarks/profile_grid.py', run_name='__main__')" > "$T/$1-$2.txt" 2>&1
  echo "exit $?" >> "$T/$1-$2.txt"
}
for n in $AFTER; do one after "$n" & done
for n in $BEFORE; do one before "$n" & done
wait
for side in after before; do
  for f in $(ls "$T"/$side-*.txt | sort -t- -k2 -n); do echo "== $(basename "$f" .txt)"; cat "$f"; done > "$OUT/$side.txt"
done
{ lscpu | grep -E "Model name|^CPU\(s\)"; python3 --version; } > "$OUT/machine.txt" 2>&1

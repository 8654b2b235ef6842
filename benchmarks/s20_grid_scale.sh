#!/bin/bash
# The grid barrier's before/after table of benchmarks/results/s20-grid.md: per N,
# benchmarks/profile_grid.py with session 20's switches on ("after") and off ("before": the tree
# otherwise the same), one after the other, then the other way round (each side twice, in the same
# minutes). Each process is limited to ${CPU_LIMIT:-300} CPU seconds (ulimit -t). Session 19's
# table is benchmarks/s19_grid_scale.sh. Run from the repository root:
#   bash benchmarks/s20_grid_scale.sh [N ...]
OFF="--off cat.relalg.KEYS_ONLY --off cat.interp.DEMAND_CLOSURES"
run() {
  echo "== $1 $2 $(date +%T)"
  # shellcheck disable=SC2086
  (ulimit -t "${CPU_LIMIT:-300}"; python benchmarks/profile_grid.py "$1" $3); echo "rc $?"
}
for n in ${@:-2 4 8 12 16}; do
  run "$n" after ""; run "$n" before "$OFF"; run "$n" before "$OFF"; run "$n" after ""
done

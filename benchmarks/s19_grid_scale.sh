#!/bin/bash
# The grid barrier's scale table of benchmarks/results/s19-grid.md: per N, benchmarks/profile_grid.py
# with session 19's switches on ("after") and off ("before": the tree otherwise the same), one
# after the other. Each process is limited to ${CPU_LIMIT:-300} CPU seconds (ulimit -t): a row cut
# there took more. Run from the repository root: bash benchmarks/s19_grid_scale.sh [N ...]
OFF="--off engines.z3.chains.IDLE_POSITION --off queries.races.EARLY --off queries.hangs.HANGS_FIRST"
OFF="$OFF --off queries.checker.SITES_WITH_RACES"
for n in ${@:-2 4 6 8 10 12 16}; do
  echo "== $n after $(date +%T)"; (ulimit -t "${CPU_LIMIT:-300}"; python benchmarks/profile_grid.py "$n"); echo "rc $?"
  # shellcheck disable=SC2086
  echo "== $n before $(date +%T)"; (ulimit -t "${CPU_LIMIT:-300}"; python benchmarks/profile_grid.py "$n" $OFF); echo "rc $?"
done

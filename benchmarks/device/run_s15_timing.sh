#!/bin/bash
# Session 15's timing call: its steps (campaigns, enum, real, explain, real+explain, scale) are those of
# run_s16_timing.sh, which also has session 16's (the scale table's kernels side by side, page, alone, ...).
# Kept so that benchmarks/results/s15-idle-cores.md's command still runs.
exec bash "$(dirname "$0")/run_s16_timing.sh" "$@"

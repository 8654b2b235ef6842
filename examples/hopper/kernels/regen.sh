#!/bin/sh
# Regenerate the committed PTX of every Hopper kernel (or of the .cu files named) with nvcc:
#   nvcc -ptx -lineinfo -arch=sm_90a -O3 k.cu -o k.ptx
# run in this directory (assert()'s __FILE__ is then the file's name). As in examples/kernels/regen.sh,
# the absolute path nvcc writes into `.file 1` is replaced by the file's name;
# tests/kernel/test_hopper_idioms.py compares a fresh compile with the committed file after the same
# replacement, ignoring the version header and the -lineinfo .debug_str section.
set -e
cd "$(dirname "$0")"
[ $# -gt 0 ] || set -- *.cu
for cu in "$@"; do
    cu=$(basename "$cu")
    ptx="${cu%.cu}.ptx"
    nvcc -ptx -lineinfo -arch=sm_90a -O3 "$cu" -o "$ptx"
    sed -i "s|^\(\t\.file\t1 \)\".*/$cu\"|\1\"$cu\"|" "$ptx"
done

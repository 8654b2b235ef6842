#!/bin/sh
# Regenerate the committed PTX of the kernels here (nvcc 13.0; the .file paths made bare, as
# tests/kernel/test_kernel_front_end.py does when it recompiles and compares).
cd "$(dirname "$0")" || exit 1
for f in *.cu; do
  nvcc -ptx -lineinfo -arch=sm_90 -O3 "$f" -o "${f%.cu}.ptx" || exit 1
  sed -i "s|^\(\s*\.file\s\+[0-9]\+\s\+\"\)$(pwd)/|\1|" "${f%.cu}.ptx"
done

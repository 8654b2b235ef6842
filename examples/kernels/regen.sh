#!/bin/sh
# Regenerate the committed PTX of every kernel (or of the .cu files named) with nvcc:
#   nvcc -ptx -lineinfo -arch=sm_90 -O3 k.cu -o k.ptx
# run in the kernel's own directory (this one, or real/ for real/*.cu), so that assert()'s __FILE__
# string is the file's name. nvcc writes the absolute path of k.cu into `.file 1`; it is replaced
# by the file's name, so that the PTX does not depend on where the repository is checked out
# (tests/kernel/test_kernel_corpus.py and test_real_corpus.py compare a fresh compile with the
# committed file after the same replacement, ignoring the version header and the -lineinfo
# .debug_str section, whose inlined-function names carry a hash of the absolute path).
set -e
cd "$(dirname "$0")"
[ $# -gt 0 ] || set -- *.cu real/*.cu
for cu in "$@"; do
    case "$cu" in
        real/*|*/real/*) dir=real ;;
        *) dir=. ;;
    esac
    cu=$(basename "$cu")
    ptx="${cu%.cu}.ptx"
    (
        cd "$dir"
        nvcc -ptx -lineinfo -arch=sm_90 -O3 "$cu" -o "$ptx"
        sed -i "s|^\(\t\.file\t1 \)\".*/$cu\"|\1\"$cu\"|" "$ptx"
    )
done

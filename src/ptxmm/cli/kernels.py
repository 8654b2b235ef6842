"""The kernel options of ``ptxmm check`` (a .cu file or an nvcc PTX module): ``--launch``,
``--nvcc-flags``, ``--exists``, ``--forall``. Each wins over the file's ``// ptxmm:`` line."""

from __future__ import annotations

import functools

import click


def kernel_options(f):
    """Add the kernel options to a command; it receives them as one ``kernel`` argument
    (:class:`ptxmm.kernel.kernels.KernelArgs`, or None when none is given)."""

    @click.option("--launch", default=None, metavar="'K<<<G, B>>>(ARGS)'",
                  help="kernel files: the launch, e.g. 'mp<<<2, 1>>>(int data[1], int flag[1])' "
                  "(default: the file's `// ptxmm: launch` line)")
    @click.option("--nvcc-flags", default=None, help="kernel files: nvcc's flags for a .cu "
                  "(default: -lineinfo -arch=sm_90 -O3)")
    @click.option("--exists", "exists_", default=None, metavar="COND",
                  help="kernel files: a condition over buffer elements, e.g. 'out[0] == 1 && x[1] != 2'")
    @click.option("--forall", "forall_", default=None, metavar="COND",
                  help="kernel files: a condition every execution must satisfy")
    @functools.wraps(f)
    def wrapper(*args, launch, nvcc_flags, exists_, forall_, **kw):
        kernel = None
        if any(x is not None for x in (launch, nvcc_flags, exists_, forall_)):
            from ..kernel.kernels import KernelArgs

            kernel = KernelArgs(launch, nvcc_flags, exists_, forall_)
        return f(*args, kernel=kernel, **kw)

    return wrapper

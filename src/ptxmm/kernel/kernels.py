"""Reading a kernel file: a ``.cu`` file (compiled by nvcc) or a PTX module, its ``// ptxmm:``
lines and the command line's additions (:class:`KernelArgs`), instantiated into a Program
(:func:`read_kernel`)."""

from __future__ import annotations

from pathlib import Path

from .._infra.records import record
from ..errors import SemanticError, SourcePos
from ..ir.layout import AddressOracle
from ..ir.program import Program
from .directives import parse_condition, read_directives, read_expect
from .instantiate import instantiate
from .launch import parse_launch


@record
class KernelArgs:
    """What the command line adds to a kernel file: the launch, nvcc's flags, a condition (each
    wins over the file's ``// ptxmm:`` line)."""

    launch: str | None = None
    nvcc_flags: str | None = None
    exists: str | None = None
    forall: str | None = None



def read_kernel(text: str, file: str = "<string>", args: KernelArgs | None = None,
                 oracle: AddressOracle | None = None) -> Program:
    """A ``.cu`` file (compiled by nvcc) or a PTX module, with its launch: the Program.
    ``oracle``: the address oracle of its layout (:mod:`.addresses`; ptxmm.loading gives the
    engines')."""
    from . import module as ptx_module

    args = args or KernelArgs()
    path = Path(file)
    source_file = None
    if path.suffix == ".cu":
        from .nvcc import compile_cu

        source_file = file
        ptx, _cached = compile_cu(path, args.nvcc_flags)
        module = ptx_module.parse(ptx, file[:-3] + ".ptx" if file.endswith(".cu") else file)
        directives = list(ptx_module._Splitter(text, file).directives_only())
    else:
        module = ptx_module.parse(text, file)
        directives = list(module.directives)
        twin = path.with_suffix(".cu")
        if not directives and twin.is_file():
            directives = list(ptx_module._Splitter(twin.read_text(), str(twin)).directives_only())
        if twin.is_file():
            source_file = str(twin)
    d = read_directives(directives)
    launch_text, launch_pos = (args.launch, None) if args.launch else d.get("launch", (None, None))
    if launch_text is None:
        raise SemanticError(f"{file} has no launch", SourcePos(file, 1, 1),
                            "add a line `// ptxmm: launch KERNEL<<<GRID, BLOCK>>>(int buf[N], ...)` or "
                            "give --launch")
    launch = parse_launch(launch_text, launch_pos)
    cond = None
    floats = {b.name: int(b.type[1:]) for b in launch.buffers if b.type.startswith("f")}
    if args.exists or args.forall:
        if args.exists and args.forall:
            raise SemanticError("give --exists or --forall, not both", None, None)
        q = "exists" if args.exists else "forall"
        cond = parse_condition(q, args.exists or args.forall, None, floats)
    else:
        for q in ("exists", "forall", "~exists"):
            if q in d:
                cond = parse_condition(q, *d[q], floats)
    expect, expect_pos = None, None
    if "expect" in d:
        expect, expect_pos = read_expect(*d["expect"])
    return instantiate(module, launch, cond, file, source_file, expect, expect_pos, oracle)


__all__ = ["KernelArgs", "read_kernel"]

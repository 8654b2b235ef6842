"""A launch of a kernel of a PTX module instantiated into a :class:`~ptxmm.ir.program.Program`.

The launch is first checked against the kernel's directives and given the cluster of its
``__cluster_dims__`` (:func:`.launch.apply_directives`); a cooperative launch gets the grid
workspace (:func:`with_workspace`, ir/sregs.py). Every CUDA thread of the launch is a thread of the
model (independent thread scheduling), placed in its CTA and cluster, with its special registers
(``%tid``, ``%ctaid``, ``%laneid``, ...) concrete (initial register values). Buffers — the launch's
``T name[N]`` arguments and the module's ``.global``/``.shared`` variables — lie at fixed addresses
(:class:`.layout.Layout`); every element is a location of the model named ``name[i]``. A kernel
parameter's value is its buffer's base address (or the scalar). The event builder computes each
access's address and asks the layout which element it names; an address outside every buffer is an
*out-of-bounds* access: the thread stops there (:mod:`ptxmm.ir.stops`), as at a failing
``assert()``, and the finding is a query on the formula (:mod:`ptxmm.queries.sites`). An address
computed from loaded data is split by the event builder into one case per element it may name
(:meth:`.layout.Layout.targets`, asked of the address oracle the caller gives) and one out-of-bounds
case."""

from __future__ import annotations

from ..errors import Diagnostic, SemanticError, SourcePos
from ..ir.launch import KernelInfo, prod
from ..ir.layout import GLOBAL_BASE, SLOT, AddressOracle, Layout, Region
from ..ir.program import Condition, MemRef, Placement, Program, Thread
from ..ir.sregs import GRID_WORKSPACE, WORKSPACE, WORKSPACE_WORDS, is_dynamic, width
from .demangle import demangle
from .inline import Expander
from .launch import Launch, apply_directives
from .memory import access_widths, layout_of, locations
from .module import Function, Module
from .multigpu import check_module_globals
from .params import param_values
from .threads import dims, special_registers, specials_used


def find_kernel(module: Module, name: str, pos: SourcePos | None, file: str | None = None) -> Function:
    """``module``'s kernel ``name`` (its PTX name or demangled); ``file``: the file the user gave,
    named when there is none (a .cu's module is nvcc's output, a temporary file)."""
    entries = module.entries
    for f in entries:
        if f.name == name:
            return f
    hits = [f for f in entries if demangle(f.name) == name or demangle(f.name).split("::")[-1] == name]
    if len(hits) == 1:
        return hits[0]
    listed = ", ".join(f"{demangle(f.name)} ({f.name})" for f in entries) or "none"
    if len(hits) > 1:
        raise SemanticError(f"kernel {name} is overloaded: " + ", ".join(f.name for f in hits), pos,
                            "name it by its PTX name")
    raise SemanticError(f"no kernel named {name} in {file or module.file}", pos, f"kernels: {listed}")


def instantiate(module: Module, launch: Launch, condition: Condition | None = None,
                file: str | None = None, source_file: str | None = None,
                expect: tuple[str, ...] | None = None, expect_pos: SourcePos | None = None,
                oracle: AddressOracle | None = None) -> Program:
    """The Program of ``launch`` of a kernel of ``module``; ``oracle`` resolves the addresses the
    kernel computes from loaded data (:meth:`.layout.Layout.targets`)."""
    fn = find_kernel(module, launch.kernel, launch.pos, file)
    launch = apply_directives(launch, demangle(fn.name), fn.directives, _cuda_lines(source_file, fn.name))
    layout = layout_of(module, launch, fn=fn)
    notes: list[str] = []
    bodies, declared = [], {}
    for gpu in range(launch.gpus):  # each GPU's body: its rank and its own buffers' addresses
        ex = Expander(module, layout, param_values(fn, launch, layout, gpu), notes if gpu == 0 else [])
        bodies.append(ex.expand(fn))
        declared |= ex.declared
    body = bodies[0]
    # the byte arrays' element widths from the accesses (the buffers' addresses do not change)
    layout = layout_of(module, launch,
                       access_widths(body, {v.name for v in module.variables if v.byte_array}), fn, oracle)
    if launch.gpus > 1:
        check_module_globals(layout, launch)
    specials = specials_used(body, declared)
    layout = with_workspace(layout, launch, specials)
    threads: list[Thread] = []
    cta_n = launch.grid[0] * launch.grid[1] * launch.grid[2]
    tid_n = launch.block[0] * launch.block[1] * launch.block[2]
    reg_types = tuple(sorted((declared | {s: f"u{width(s)}" for s in specials}).items()))
    fixed = [s for s in specials if not is_dynamic(s)]  # timers, %envreg: the builder's (ir/sregs.py)
    env = workspace_registers(layout, launch, specials)
    notes += launch_notes(launch, specials)
    for gpu, cta in ((g, c) for g in range(launch.gpus) for c in range(cta_n)):
        cluster = None
        if launch.cluster is not None:
            c = dims(launch.grid, cta)
            cl = launch.cluster
            nclu = tuple(launch.grid[k] // cl[k] for k in range(3))
            cid = tuple(c[k] // cl[k] for k in range(3))
            cluster = cid[0] + nclu[0] * (cid[1] + nclu[1] * cid[2])
        for tid in range(tid_n):
            sregs = special_registers(launch, cta, tid)
            init = tuple((s, sregs[s]) for s in fixed) + env
            # GPU g's blocks run on GPU g (Placement.gpu: the .gpu scope holds one GPU's threads)
            name = f"b{cta}t{tid}" if launch.gpus == 1 else f"g{gpu}b{cta}t{tid}"
            threads.append(Thread(name, len(threads), Placement(gpu, cluster, cta), bodies[gpu],
                                  init_regs=init, pos=fn.pos, reg_types=reg_types))
    info = KernelInfo(fn.name, demangle(fn.name), launch, layout, source_file, expect, expect_pos,
                      tuple(notes))
    prog = Program(name=demangle(fn.name), threads=tuple(threads), locations=locations(layout),
                   condition=condition, description=str(launch), file=file or module.file,
                   format="kernel", layout=layout, kernel=info,
                   warnings=tuple(Diagnostic(n, launch.pos) for n in notes))
    if condition is not None:
        check_condition(prog, condition)
    return prog



# ----- the grid workspace of a cooperative launch (ir/sregs.py) -----------------------------------

def with_workspace(layout: Layout, launch: Launch, specials: list[str]) -> Layout:
    """``layout`` with the driver's grid workspace of a cooperative launch whose kernel reads its
    address (``specials``: the special registers it reads): a hidden global buffer of
    WORKSPACE_WORDS zero-initialised .u32 words (cooperative groups' ``grid_workspace { unsigned
    int wsSize; unsigned int barrier; }``) after every other global buffer."""
    if not launch.cooperative or not any(s in GRID_WORKSPACE for s in specials):
        return layout
    top = max((r.base for r in layout.regions if r.space == "global"), default=GLOBAL_BASE - SLOT)
    region = Region(WORKSPACE, WORKSPACE, "global", "u32", WORKSPACE_WORDS, top + SLOT,
                    (0,) * WORKSPACE_WORDS)
    return Layout(layout.regions + (region,), layout.oracle)


def workspace_registers(layout: Layout, launch: Launch, specials: list[str]) -> tuple[tuple[str, int], ...]:
    """The values of the grid-workspace registers the kernel reads (every thread's): in a
    cooperative launch the workspace's address (%envreg1 its high half, %envreg2 its low half),
    in any other launch the null pointer (ir/sregs.py says why); every other %envreg stays the
    builder's unknown value."""
    if not any(s in GRID_WORKSPACE for s in specials):
        return ()
    base = layout.base_of(WORKSPACE) if launch.cooperative else 0
    halves = {GRID_WORKSPACE[0]: base >> 32, GRID_WORKSPACE[1]: base & 0xFFFFFFFF}
    return tuple((s, halves[s]) for s in specials if s in halves)


def launch_notes(launch: Launch, specials: list[str]) -> list[str]:
    """What the report says of a launch: where its cluster comes from, what a cooperative launch
    assumes, and the null grid workspace of a launch that is not cooperative."""
    out = []
    if launch.cluster_from == "reqnctapercluster":
        out.append(f"the cluster {launch.cluster} is the kernel's own (__cluster_dims__, "
                   ".reqnctapercluster): CUDA uses it when the launch gives none")
    if launch.cooperative:
        out.append(f"a cooperative launch: its {prod(launch.grid)} CTAs are taken to be co-resident, as "
                   "cudaLaunchCooperativeKernel guarantees when it accepts a grid; whether the device holds "
                   "them all at once (else cudaErrorCooperativeLaunchTooLarge) is beyond the model")
    elif any(s in GRID_WORKSPACE for s in specials):
        out.append("the kernel reads the grid workspace pointer (%envreg1, %envreg2: cooperative groups' "
                   "this_grid()), and the launch is not cooperative: the pointer is taken as null, as the "
                   "driver gives it to a process that has made no cooperative launch (grid.sync() then "
                   "traps); write `cooperative KERNEL<<<...>>>(...)` for cudaLaunchCooperativeKernel")
    return out


def _cuda_lines(source_file: str | None, kernel: str):
    """directive name → ``k.cu:12``, the line of the kernel's CUDA attribute that makes nvcc emit
    it (the first line naming the attribute at or before the kernel's declaration), or None."""
    from pathlib import Path

    from .launch import CUDA_SPELLING

    if source_file is None:
        return None
    try:
        lines = Path(source_file).read_text().splitlines()
    except OSError:
        return None
    short = demangle(kernel).split("::")[-1].split("(")[0]
    decl = next((k for k, ln in enumerate(lines) if "__global__" in ln and short in ln), None)

    def where(directive: str) -> str | None:
        attr = CUDA_SPELLING.get(directive)
        if attr is None or decl is None:
            return None
        for k in range(decl, max(decl - 8, -1), -1):
            if attr in lines[k] and not lines[k].lstrip().startswith("//"):
                return f"{Path(source_file).name}:{k + 1}"
        return None

    return where


def check_condition(prog: Program, cond: Condition) -> None:
    from ..ir.program import cond_refs

    names = {loc.name for loc in prog.locations}
    for r in cond_refs(cond.expr):
        if isinstance(r, MemRef) and r.loc not in names:
            shown = ", ".join(sorted(names)[:12])
            raise SemanticError(f"the condition names {r.loc}, which is no buffer element", None,
                                f"elements: {shown}")
        if isinstance(r, MemRef) and prog.location(r.loc).tensormap is not None:
            raise SemanticError(f"the condition names the tensor map {r.loc}", None,
                                "a tensor map is opaque: name buffer elements")
        if isinstance(r, MemRef) and prog.location(r.loc).space != "global":
            space = prog.location(r.loc).space
            copies = "one copy per CTA" if space == "shared" else "one copy per thread"
            raise SemanticError(f"the condition names {r.loc}, a .{space} element ({copies})", None,
                                "name global buffer elements")
    _constants_fit(prog, cond.expr)


def _constants_fit(prog: Program, e) -> None:
    """A constant compared with a buffer element fits the element's type (as a litmus
    condition's must): ``out[0] == 4294967297`` on an int buffer is refused, never wrapped."""
    from ..ir.program import And, Cmp, Not, Or

    if isinstance(e, (And, Or)):
        for a in e.args:
            _constants_fit(prog, a)
    elif isinstance(e, Not):
        _constants_fit(prog, e.arg)
    elif isinstance(e, Cmp) and isinstance(e.lhs, MemRef) and isinstance(e.rhs, int) \
            and not isinstance(e.rhs, bool):
        ty = prog.location(e.lhs.loc).type
        if ty[:1] in ("s", "u", "b") and ty[1:].isdigit():
            w = int(ty[1:])
            lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if ty[0] == "s" else (0, (1 << w) - 1)
            if not -(1 << (w - 1)) <= e.rhs < (1 << w):
                raise SemanticError(f"the condition compares {e.lhs.loc} ({w}-bit .{ty}) with "
                                    f"{e.rhs}, which does not fit {w} bits", None,
                                    f"the element's values: {lo}..{hi}")


__all__ = ["check_condition", "find_kernel", "instantiate"]

"""How ``explain --fix`` says its fixes (issue 42, "advice in CUDA terms"): for a kernel compiled
with line information, each change as the edit of the CUDA line it came from
(:mod:`ptxmm.kernel.cuda_edits`), the PTX edit kept as a second, indented detail; for a litmus
test (or a kernel without ``.loc``), the PTX edit as before. Fixes that read the same (two
positions of one inserted fence among non-memory instructions: the same edit of the source) are
said once. Which changes are fixes is :mod:`ptxmm.explanation.fix`'s search; this module only
words them."""

from __future__ import annotations

from ..ir.instructions import type_width
from ..ir.program import Fence, Program, Store
from ..kernel.cuda_edits import (
    CudaEdit,
    access_edit,
    fence_edit,
    fence_insert,
    guard_edit,
    pack_edit,
    split_edit,
)
from .boundsguard import elements, region_of
from .fix import MEMORY, Change, FixReport, Solution

_OPS = {"Load": "ld", "Store": "st", "Atom": "atom", "Red": "red"}


def cuda_edit(prog: Program, c: Change) -> CudaEdit | None:
    """The CUDA edit of one change, None where the instruction has no CUDA line. An instruction
    nvcc gives line 0 (``.loc 1 0 0``: code of no source line, e.g. a load it hoisted out of a
    loop) is said at the nearest CUDA line of its thread, and says so."""
    e = _cuda_edit(prog, c, lambda ins: ins.pos)
    if e is not None or not _line_zero(prog, c):
        return e
    t = prog.threads[c.thread]
    near = _nearest(t, c.index)
    if near is None:
        return None
    e = _cuda_edit(prog, c, lambda ins: near if ins is _at(t, c) else ins.pos)
    if e is None:
        return None
    return CudaEdit(e.file, e.line, e.text + " [nvcc gives the instruction no line of its own (line 0): "
                    "this is the nearest line of its thread]")


def _at(t, c: Change):
    if c.kind == "fence":
        return next((i for i in t.instrs[c.index:] if isinstance(i, MEMORY)), None)
    return t.instrs[c.index] if c.index < len(t.instrs) else None


def _line_zero(prog: Program, c: Change) -> bool:
    ins = _at(prog.threads[c.thread], c) if c.thread < len(prog.threads) else None
    src = getattr(getattr(ins, "pos", None), "src", None)
    return src is not None and src.line <= 0


def _nearest(t, index: int):
    """The position of the nearest instruction (earlier first) with a CUDA line."""
    order = sorted(range(len(t.instrs)), key=lambda j: (abs(j - index), j > index))
    for j in order:
        src = getattr(t.instrs[j].pos, "src", None) if t.instrs[j].pos is not None else None
        if src is not None and src.line > 0:
            return t.instrs[j].pos
    return None


def _cuda_edit(prog: Program, c: Change, pos_of) -> CudaEdit | None:
    if c.thread >= len(prog.threads):
        return None
    if c.kind == "wait":  # an inserted mbarrier wait: the kernel's own wait call (waitfix.py)
        from .waitfix import wait_edit

        return wait_edit(prog, c)
    t = prog.threads[c.thread]
    if c.kind == "fence":
        nxt = next((i for i in t.instrs[c.index:] if isinstance(i, MEMORY)), None)
        if nxt is None or c.sem is None or c.scope is None:
            return None
        return fence_insert(prog, pos_of(nxt), c.sem, c.scope, t.name)
    if c.index >= len(t.instrs):
        return None
    ins = t.instrs[c.index]
    if c.kind == "guard":
        r = region_of(prog, t, c.index)
        return None if r is None else guard_edit(prog, pos_of(ins), r.name, elements(r, ins))
    if c.kind == "pack":  # vecpack.py: every access of the buffer, at its asm lines
        accesses = [prog.threads[ti].instrs[i] for ti, i in c.sites if ti < len(prog.threads)]
        sites = [(pos_of(a), "st" if isinstance(a, Store) else "ld", head(a)) for a in accesses]
        return pack_edit(prog, sites, c.region, c.element * type_width(ins.type))
    if c.kind == "split" and c.sem is not None and c.scope is not None:
        return split_edit(prog, pos_of(ins), "st" if isinstance(ins, Store) else "ld", head(ins),
                          c.element, (c.sem, c.scope))
    if isinstance(ins, Fence):
        new = (c.sem or ins.sem, c.scope or ins.scope)
        return fence_edit(prog, pos_of(ins), (ins.sem, ins.scope), new)
    op = _OPS.get(type(ins).__name__)
    if op is None:
        return None
    return access_edit(prog, pos_of(ins), op, (ins.sem, ins.scope), (c.sem or ins.sem, c.scope),
                       head=head(ins))


def head(ins) -> str:
    """An instruction's opcode with its qualifiers, as its PTX text spells it (``ld.cg.u32``)."""
    return ins.text.split(None, 1)[0] if ins.text else ""


def solution_lines(prog: Program, s: Solution) -> list[str]:
    """A solution's changes: the CUDA edits (each with its PTX edit beneath), or the PTX text."""
    edits = [cuda_edit(prog, c) for c in s.changes]
    if not any(edits):
        return [s.text]
    out = []
    for c, e in zip(s.changes, edits):
        out.append(str(e) if e is not None else c.text)
        if e is not None:
            out.append(f"   PTX: {c.text}")
    return out


def fix_lines(prog: Program, report: FixReport) -> list[str]:
    """``FixReport.lines()`` in the program's own words, each distinct edit once."""
    base = report.lines()
    if report.already or not report.solutions:
        return base
    head = [ln for ln in base if not ln.startswith("  ") or ln.lstrip().startswith("[")]
    seen: set[tuple[str, ...]] = set()
    body: list[str] = []
    for s in report.solutions:
        lines = solution_lines(prog, s)
        key = tuple(ln for ln in lines if not ln.startswith("   PTX:"))
        if key in seen:
            continue
        seen.add(key)
        n = len(seen)
        body.append(f"  {n}. {lines[0]}   (cost {s.cost})")
        body += [f"     {ln}" if ln.startswith("   PTX:") else f"     + {ln}" for ln in lines[1:]]
    first = head[0]
    if len(seen) != len(report.solutions):
        first = first.replace(f"{len(report.solutions)} minimal fix(es)", f"{len(seen)} minimal fix(es)", 1)
        first = first.replace(f"fix: {len(report.solutions)} fix(es)", f"fix: {len(seen)} fix(es)", 1)
    return [first, *body, *head[1:]]


def fixes_json(prog: Program, report: FixReport) -> dict:
    """``FixReport.to_json()`` with each change's CUDA edit (``cuda``: file, line, edit; null
    without a CUDA line)."""
    out = report.to_json()
    for sj, s in zip(out["solutions"], report.solutions):
        for cj, c in zip(sj["changes"], s.changes):
            e = cuda_edit(prog, c)
            cj["cuda"] = None if e is None else e.to_json()
    return out


__all__ = ["cuda_edit", "fix_lines", "fixes_json", "head", "solution_lines"]

"""A fix for an out-of-bounds access (issue 42, item 5): guard it with the bound the launch implies.

No strengthening moves an index (fixfind.py): what removes an access outside every buffer is a
bound check in the kernel, ``if (i < 0 || i >= n) return;`` before the access. The buffer is the
one the access's address is computed from: its register traced back, through moves and
additions, to a kernel parameter whose value is a buffer's base (the launch binds each pointer
parameter to its buffer, kernel/params.py); ``n`` is the number of elements of the access's width
that buffer holds (the launch's size; in the kernel, the size passed beside the pointer).

A candidate (:func:`guard_changes`) is kind ``"guard"`` at the access's instruction; it is made
(:func:`guard_code`) as nvcc compiles that check: before the access, the thread returns (``ret``,
PTX ISA 9.7.9.11) when the address is below the buffer's base or past its last element
(``setp.lo``/``setp.hi`` on the 64-bit address, 9.7.4.1). The edit in CUDA words is
kernel/cuda_edits.py's :func:`~ptxmm.kernel.cuda_edits.guard_edit`. A thread that returns early
skips whatever follows (a later ``__syncthreads()`` would then wait for it: the re-check asks
the finding's own property, and fixfind.py asks that no new finding of it appears)."""

from __future__ import annotations

from ..ir.program import Alu, Imm, Load, Program, Reg, Ret, Setp, Store, Thread, type_width
from ..ir.program import Mov as _Mov

GUARD_COST = 3  # a new statement, as a fence


def region_of(prog: Program, t: Thread, index: int):
    """The buffer (``prog.layout`` region) the address of access ``index`` is computed from,
    None where its register does not trace back to one buffer's base."""
    ins = t.instrs[index]
    layout = getattr(prog, "layout", None)
    if layout is None or not isinstance(ins.addr.base, Reg):
        return None
    bases = {r.base: r for r in layout.regions}

    def trace(reg: Reg, before: int, depth: int):
        if depth > 12:
            return None
        for j in range(before - 1, -1, -1):
            d = t.instrs[j]
            if getattr(d, "dst", None) != reg:
                continue
            if isinstance(d, _Mov):
                if isinstance(d.src, Imm):
                    return bases.get(d.src.value)
                return trace(d.src, j, depth + 1) if isinstance(d.src, Reg) else None
            if isinstance(d, Alu) and d.op == "add":
                found = [trace(s, j, depth + 1) for s in d.srcs if isinstance(s, Reg)]
                found = [r for r in found if r is not None]
                return found[0] if len(found) == 1 else None
            return None
        return None
    return trace(ins.addr.base, index, 0)


def guard_changes(prog: Program, line: int, change) -> list:
    """A guard of every access at PTX line ``line`` whose buffer is known (one per thread that
    runs it); ``change`` is fix.Change (passed in: this module is below fix.py)."""
    out = []
    for t in prog.threads:
        for i, ins in enumerate(t.instrs):
            if isinstance(ins, (Load, Store)) and ins.pos is not None and ins.pos.line == line:
                r = region_of(prog, t, i)
                if r is not None:
                    n = elements(r, ins)
                    out.append(change("guard", t.index, i, None, None, GUARD_COST,
                                      f"guard `{ins.text}` (line {line}): return when its address is "
                                      f"outside {r.name}[0..{n - 1}]"))
    return out


def elements(region, ins) -> int:
    """How many elements of the access's width the buffer holds."""
    return region.count * type_width(region.type) // type_width(ins.type)


def guard_code(prog: Program, t: Thread, index: int, serial: int) -> list:
    """The instructions put before access ``index``: return when its address is outside its
    buffer (``serial`` keeps the registers of two guards of one thread apart)."""
    ins = t.instrs[index]
    r = region_of(prog, t, index)
    if r is None:
        return []
    w = type_width(ins.type) // 8
    last = r.base + r.count * type_width(r.type) // 8 - w
    a = Reg(f"%ptxmm.guard{serial}.a")
    lo, hi = Reg(f"%ptxmm.guard{serial}.lo"), Reg(f"%ptxmm.guard{serial}.hi")
    pos, text = ins.pos, f"guard of `{ins.text}` ({r.name})"
    return [Alu(op="add", dst=a, srcs=(ins.addr.base, Imm(ins.addr.offset)), type="u64", pos=pos, text=text),
            Setp(cmp="lo", dst=lo, a=a, b=Imm(r.base), type="u64", pos=pos, text=text),
            Ret(guard=(lo, False), pos=pos, text=text),
            Setp(cmp="hi", dst=hi, a=a, b=Imm(last), type="u64", pos=pos, text=text),
            Ret(guard=(hi, False), pos=pos, text=text)]


__all__ = ["GUARD_COST", "elements", "guard_changes", "guard_code", "region_of"]

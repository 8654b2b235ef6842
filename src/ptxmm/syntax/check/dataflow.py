"""Registers: a must-be-written data flow over each thread's control flow. A register read on
some path before any write is an error (PTX registers are undefined until written); code no path
reaches is a warning."""

from __future__ import annotations

from ...errors import Diagnostic, SemanticError
from ...ir.program import (
    Addr,
    Branch,
    Instruction,
    Label,
    Reg,
    Ret,
    Thread,
    operands,
)
from ...ir.sregs import TIMERS
from .common import Sources, did_you_mean, line_of

# ----- registers: a must-be-written data flow over each thread's control flow ------------------------


# special registers the hardware defines (read-only, never written by the thread): their value is
# the thread's placement (events.py), or the builder chooses it (the timers and %envreg: ir/sregs.py)
SPECIAL_REGS = frozenset({"%cluster_ctarank", *TIMERS, *(f"%envreg{i}" for i in range(32))})


def _reads(ins: Instruction, src: Sources) -> list[Reg]:
    regs = [o.base if isinstance(o, Addr) else o for o in operands(ins)]
    if ins.guard is not None:
        regs.insert(0, ins.guard[0])
    regs += src.extra_reads.get(id(ins), [])
    return [r for r in regs if isinstance(r, Reg) and r.name not in SPECIAL_REGS]


class Flow:
    """Which registers are written on every path to each instruction of one thread. Basic blocks
    start at labels and after branches and returns; a block's registers are those of all its
    predecessors (intersected) plus what it writes; unreachable blocks are reported as warnings."""

    def __init__(self, t: Thread, src: Sources):
        self.t, self.src = t, src
        ins = t.instrs
        self.labels = {i.name: k for k, i in enumerate(ins) if isinstance(i, Label)}
        starts = {0} | set(self.labels.values())
        starts |= {k + 1 for k, i in enumerate(ins) if isinstance(i, (Branch, Ret))}
        self.starts = sorted(s for s in starts if s < len(ins)) or [0]
        self.block_at = {s: b for b, s in enumerate(self.starts)}
        self.ends = self.starts[1:] + [len(ins)]
        self.init = frozenset(name for name, _ in t.init_regs)
        self._in: list[frozenset | None] | None = None

    def succs(self, b: int) -> list[int | None]:
        """Successor blocks; None stands for the thread's end."""
        end = self.ends[b]
        last = self.t.instrs[end - 1] if end > self.starts[b] else None
        fall = [self.block_at.get(end)] if end < len(self.t.instrs) else [None]
        if isinstance(last, Branch):
            tgt = [self.block_at[self.labels[last.target]]]
            return tgt if last.guard is None else tgt + fall
        if isinstance(last, Ret):
            return [None] if last.guard is None else [None] + fall
        return fall

    def gen(self, b: int, before: frozenset) -> frozenset:
        """The registers written on every path through block ``b`` entered with ``before``."""
        return self.walk(b, before, lambda *_: None)

    def walk(self, b: int, state: frozenset, on_read) -> frozenset:
        have = set(state)
        pending: dict[str, set[tuple[str, bool]]] = {}
        for k in range(self.starts[b], self.ends[b]):
            ins = self.t.instrs[k]
            for r in _reads(ins, self.src):
                if r.name not in have:
                    on_read(ins, r)
            dst = getattr(ins, "dst", None)
            if not isinstance(dst, Reg):
                continue
            for name in [n for n, gs in pending.items() if any(g == dst.name for g, _ in gs)]:
                del pending[name]  # the predicate changed: its earlier guards no longer pair
            if ins.guard is None:
                have.add(dst.name)
                continue
            gs = pending.setdefault(dst.name, set())
            gs.add((ins.guard[0].name, ins.guard[1]))
            if (ins.guard[0].name, not ins.guard[1]) in gs:
                have.add(dst.name)
        return frozenset(have)

    def solve(self) -> list[frozenset | None]:
        """Registers written on every path into each block (None: no path reaches it)."""
        if self._in is not None:
            return self._in
        n = len(self.starts)
        ins: list[frozenset | None] = [None] * n
        ins[0] = self.init
        work = [0]
        while work:
            b = work.pop()
            state = ins[b]
            assert state is not None
            out = self.gen(b, state)
            for s in self.succs(b):
                if s is None:
                    continue
                new = out if ins[s] is None else ins[s] & out
                if new != ins[s]:
                    ins[s] = new
                    work.append(s)
        self._in = ins
        return ins

    def defined_at_exit(self, reg: str) -> bool:
        ins = self.solve()
        for b in range(len(self.starts)):
            if ins[b] is not None and None in self.succs(b):
                if reg not in self.gen(b, ins[b]):
                    return False
        return True

    def run(self) -> list[Diagnostic]:
        """Raise on the first read of a register not written on every path to it; return the
        warnings for unreachable code."""
        if not self.t.instrs:
            return []
        ins = self.solve()
        bad: list[tuple[int, Instruction, Reg]] = []
        for b, state in enumerate(ins):
            if state is not None:
                self.walk(b, state, lambda i, r: bad.append((_index(self.t, i), i, r)))
        if bad:
            self.fail(*min(bad, key=lambda x: x[0])[1:])
        return self.unreachable(ins)

    def fail(self, ins: Instruction, r: Reg) -> None:
        t, written = self.t, written_regs(self.t)
        init = (f"`.reg .{_reg_type(t, r.name)} {r.name} = 0;`" if self.src.dialect == "ptx"
                else f"`{t.name}:{r.name} = 0;` in the init block")
        what = f"`{ins.text}` reads {r.name}"
        if r.name not in written:
            raise SemanticError(
                f"{what}, which thread {t.name} never writes", ins.pos,
                did_you_mean(r.name, written) + "registers are undefined until written: write "
                f"it first, or give it an initial value with {init}")
        writers = ", ".join(f"line {line_of(w.pos)}" + (" (predicated)" if w.guard else "")
                            for w in written[r.name][:3])
        raise SemanticError(
            f"{what}, which may not be written yet on every path to it", ins.pos,
            f"it is written at {writers}, not on every path that reaches line {line_of(ins.pos)}"
            f" (a predicated write may not run): write it before, or give it an initial value "
            f"with {init}")

    def unreachable(self, ins: list[frozenset | None]) -> list[Diagnostic]:
        out = []
        for b, state in enumerate(ins):
            if state is not None or (b > 0 and ins[b - 1] is None):
                continue
            code = [i for i in self.t.instrs[self.starts[b]:self.ends[b]]
                    if not isinstance(i, Label)]
            if code:
                out.append(Diagnostic(
                    f"unreachable code: `{code[0].text}` never runs", code[0].pos,
                    "it follows an unconditional bra or ret and no branch reaches it: add a label "
                    "a branch targets, or delete it"))
        return out


def _index(t: Thread, ins: Instruction) -> int:
    return next(k for k, i in enumerate(t.instrs) if i is ins)


def _reg_type(t: Thread, name: str) -> str:
    types = dict(t.reg_types)
    if name in types:
        return types[name]
    return "u32" if not name.startswith("%p") else "pred"


def written_regs(t: Thread) -> dict[str, list[Instruction]]:
    """Each register the thread writes (or initialises) → the instructions that write it."""
    out: dict[str, list[Instruction]] = {name: [] for name, _ in t.init_regs}
    for ins in t.instrs:
        dst = getattr(ins, "dst", None)
        if isinstance(dst, Reg):
            out.setdefault(dst.name, []).append(ins)
    return out

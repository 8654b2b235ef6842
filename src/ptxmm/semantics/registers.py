"""Register operations: mov, the ALU operations, setp, selp (and labels, which do nothing), and
mapa, which computes the address of a shared location's copy in another CTA of the cluster
(``ADDR_BASE * (i + 1) + RANK_STEP * (rank + 1)``). They create no event: a register's value is an
expression over the reads it depends on, at the width of the instruction's type. A division whose
divisor may be 0 yields a fresh unspecified value (the PTX ISA leaves the result unspecified) and a
warning."""

from __future__ import annotations

from ..errors import Diagnostic, SemanticError, UnsupportedError
from ..ir.floats import split_source
from ..ir.program import (
    Addr,
    Alu,
    Instruction,
    Label,
    Mapa,
    Mov,
    Reg,
    Selp,
    Setp,
    Thread,
    type_signed,
    type_width,
)
from ..ir.values import BIT_OPS, Const, Expr, Unspec, convert, division, float_result, mk, truth
from .builder import ADDR_W, RANK_STEP, Builder, State, handles

_SETP = {"eq": "eq", "ne": "ne", "lo": "ult", "ls": "ule", "hi": "ugt", "hs": "uge"}


def alu_op(op: str, ty: str) -> str:
    """The value operation of an ALU, atom or red operation at type ``ty`` (the signed or unsigned
    min, max, div, rem; an arithmetic or logical shr)."""
    s = type_signed(ty)
    if op in ("min", "max", "div", "rem"):
        return ("s" if s else "u") + op
    if op == "shr":
        return "sar" if s else "shr"
    return op


def _cmp_op(cmp: str, ty: str) -> str:
    if ty.startswith("f"):  # setp.ltu.ftz.f32: "ltu.ftz" (ir/floats.py)
        return "f.cmp." + cmp
    if cmp in _SETP:
        return _SETP[cmp]
    return ("s" if type_signed(ty) else "u") + cmp


@handles(Mov, Alu, Setp, Selp, Label)
def register_op(b: Builder, t: Thread, ins: Instruction, st: State, guard: Expr | None, gdeps) -> None:
    sources = b.address_sources(ins, st) if isinstance(ins, (Mov, Alu, Selp)) else []
    register_value(b, ins, st, guard, gdeps)
    if sources:
        b.note_address(st, ins.dst, sources)


def register_value(b: Builder, ins: Instruction, st: State, guard: Expr | None, gdeps) -> None:
    match ins:
        case Mov():
            v, d = b.val(ins.src, st, ins.type)
            b.set_reg(st, ins.dst, v, ins.type, d | gdeps, guard)
        case Alu() if ins.op.startswith("f."):  # floating point (ir/floats.py)
            op, sty = split_source(ins.op)
            w = type_width(ins.type)
            vals = [b.val(s, st, sty or ins.type) for s in ins.srcs]
            v = float_result(op, [x[0] for x in vals], w, lambda: nan_unspec(b, ins, w))
            b.set_reg(st, ins.dst, v, ins.type, frozenset().union(*(x[1] for x in vals)), guard)
        case Alu() if split_source(ins.op)[0] in BIT_OPS:  # popc clz brev bfind (kernel/module/lowering.py)
            op, sty = split_source(ins.op)
            x, dx = b.val(ins.srcs[0], st, sty)
            b.set_reg(st, ins.dst, mk(op, x, w=type_width(ins.type)), ins.type, dx, guard)
        case Alu():
            w = type_width(ins.type)
            op = alu_op(ins.op, ins.type)
            vals = [b.val(s, st, ins.type) for s in ins.srcs]
            if op in ("shl", "shr", "sar"):  # the shift amount is a .u32 operand
                vals[1] = b.val(ins.srcs[1], st, "u32")
            if op in ("udiv", "sdiv", "urem", "srem"):
                v = division(op, vals[0][0], vals[1][0], w, lambda: unspec(b, ins, w, vals[1][0]))
            else:
                v = mk(op, *(x[0] for x in vals), w=w)
            b.set_reg(st, ins.dst, v, ins.type, frozenset().union(*(x[1] for x in vals)), guard)
        case Setp():
            (x, dx), (y, dy) = b.val(ins.a, st, ins.type), b.val(ins.b, st, ins.type)
            b.set_reg(st, ins.dst, mk(_cmp_op(ins.cmp, ins.type), x, y, w=1), "pred", dx | dy, guard)
        case Selp():
            (x, dx), (y, dy) = b.val(ins.a, st, ins.type), b.val(ins.b, st, ins.type)
            p, dp = b.val(ins.p, st, None)
            b.set_reg(st, ins.dst, mk("ite", truth(p), x, y), ins.type, dx | dy | dp, guard)
        case Label():
            pass
        case _:
            raise UnsupportedError(f"instruction `{ins.text}`", ins.pos)


def nan_unspec(b: Builder, ins: Instruction, w: int) -> Unspec:
    """A fresh unspecified value for the bits of the NaN this instance of ``ins`` may return
    (PTX ISA 9.7.3: "Single-precision instructions return an unspecified NaN")."""
    line = ins.pos.line if ins.pos is not None else "?"
    u = Unspec(len(b.unspecs), w, f"the NaN `{ins.text}` may return (line {line})")
    b.unspecs.append(u)
    return u


def unspec(b: Builder, ins: Instruction, w: int, divisor: Expr) -> Unspec:
    """A fresh unspecified value for this instance of ``ins`` (a division whose divisor may
    be 0), and the instruction's warning."""
    line = ins.pos.line if ins.pos is not None else "?"
    u = Unspec(len(b.unspecs), w, f"the result of `{ins.text}` (line {line}; division by zero)")
    b.unspecs.append(u)
    if id(ins) not in b.warned:
        when = "divides by zero" if isinstance(divisor, Const) else "may divide by zero"
        b.warned[id(ins)] = Diagnostic(
            f"`{ins.text}` {when}: the PTX ISA leaves the result unspecified, so ptxmm lets it "
            "be any value", ins.pos,
            "no verdict depends on a made-up value; the brute-force engine cannot enumerate "
            "it (the Z3 engine checks this program)")
    return u


@handles(Mapa)
def mapa(b: Builder, t: Thread, ins: Mapa, st: State, guard, gdeps) -> None:
    rank, rdeps = b.val(ins.rank, st, "u32")
    if not isinstance(rank, Const):
        raise UnsupportedError("a CTA rank that depends on a loaded value", ins.pos)
    if b.layout is not None:  # a kernel: the address of the byte in the copy of CTA `rank`
        kernel_mapa(b, t, ins, st, guard, gdeps, rank.v, rdeps)
        return
    name, _, deps = b.resolve(Addr(ins.src), st, ins) if isinstance(ins.src, Reg) else \
        (ins.src.name, None, frozenset())
    if b.locs[b.p.physical(name)].space != "shared":
        raise SemanticError(f"mapa maps shared memory; {name} is not a .shared location", ins.pos)
    n = len(b.ranks[t.placement.cluster_key])
    if rank.v >= n:
        raise SemanticError(f"`{ins.text}`: the cluster of thread {t.name} has {n} CTA(s), ranks "
                            f"0..{n - 1}", ins.pos, "place a thread in that CTA (.cluster C .cta K)")
    v = Const(b.addr_of[name] + RANK_STEP * (rank.v + 1), ADDR_W)
    b.mapa_addrs.add(v.v)
    b.set_reg(st, ins.dst, convert(v, type_width(ins.type)), ins.type, deps | rdeps | gdeps, guard)
    b.note_address(st, ins.dst, [v.v])


def kernel_mapa(b: Builder, t: Thread, ins: Mapa, st: State, guard, gdeps, rank: int, rdeps) -> None:
    """``mapa{.shared::cluster}.u32|u64 d, a, rank`` in a kernel, ``a`` a variable or a register
    holding a shared (or generic shared) address: ``d`` is that byte's address in the copy of the
    CTA of ``rank`` (ir/layout.py, ``Layout.remote``), which an access resolves to that copy."""
    addr, deps = b.address(Addr(ins.src), st)
    if not isinstance(addr, Const):
        raise UnsupportedError(f"`{ins.text}` maps an address computed from loaded data", ins.pos,
                               "map the address of a __shared__ variable")
    n = len(b.ranks[t.placement.cluster_key])
    if rank >= n:
        raise SemanticError(f"`{ins.text}`: the cluster of thread {t.name} has {n} CTA(s), ranks "
                            f"0..{n - 1}", ins.pos, "launch a cluster of that many CTAs")
    v = Const(b.layout.remote(addr.v % (1 << ADDR_W), rank, ins), ADDR_W)
    b.mapa_addrs.add(v.v)
    b.set_reg(st, ins.dst, convert(v, type_width(ins.type)), ins.type, deps | rdeps | gdeps, guard)
    b.note_address(st, ins.dst, [v.v])

"""The device side's view of an instruction: a mnemonic and operand lists, as the CUDA emitter,
the layout and the SASS audit read them. One place maps the typed IR onto PTX text pieces
(``min``/``max``/``setp`` get their unsigned spellings from the instruction type here)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SourcePos
from ..program import (
    Addr,
    Alu,
    Atom,
    Barrier,
    Branch,
    Fence,
    Instruction,
    Label,
    Load,
    Mov,
    Operand,
    ProxyFence,
    Red,
    Reg,
    Ret,
    Selp,
    Setp,
    Store,
)


@dataclass(frozen=True)
class Flat:
    op: str  # ld st atom red fence fence_proxy bar mov alu setp selp bra label ret
    text: str = ""
    pos: SourcePos | None = None
    guard: tuple[Reg, bool] | None = None
    sem: str | None = None
    scope: str | None = None
    space: str | None = None
    type: str | None = None
    aop: str | None = None  # atom/red/alu operation; setp comparison (unsigned ones end in u)
    dst: Reg | None = None
    addr: Addr | None = None
    srcs: tuple[Operand, ...] = ()
    label: str | None = None
    volatile: bool = False


def _unsigned(ty: str) -> bool:
    return ty.startswith(("u", "b"))


def flat(ins: Instruction) -> Flat:
    c = dict(text=ins.text, pos=ins.pos, guard=ins.guard)
    match ins:
        case Load():
            return Flat("ld", sem=ins.sem, scope=ins.scope, space=ins.space, type=ins.type, dst=ins.dst,
                        addr=ins.addr, volatile=ins.volatile, **c)
        case Store():
            return Flat("st", sem=ins.sem, scope=ins.scope, space=ins.space, type=ins.type,
                        addr=ins.addr, srcs=(ins.src,), volatile=ins.volatile, **c)
        case Atom():
            return Flat("atom", sem=ins.sem, scope=ins.scope, space=ins.space, type=ins.type, aop=ins.op,
                        dst=ins.dst, addr=ins.addr, srcs=ins.srcs, **c)
        case Red():
            return Flat("red", sem=ins.sem, scope=ins.scope, space=ins.space, type=ins.type, aop=ins.op,
                        addr=ins.addr, srcs=(ins.src,), **c)
        case Fence():
            return Flat("fence", sem=ins.sem, scope=ins.scope, **c)
        case ProxyFence():
            return Flat("fence_proxy", aop=ins.kind, **c)
        case Barrier():
            return Flat("bar", srcs=ins.ids + ((ins.count,) if ins.count is not None else ()),
                        aop=ins.kind, **c)
        case Mov():
            return Flat("mov", type=ins.type, dst=ins.dst, srcs=(ins.src,), **c)
        case Alu():
            aop = ins.op + ("u" if ins.op in ("min", "max") and _unsigned(ins.type) else "")
            return Flat("alu", type=ins.type, aop=aop, dst=ins.dst, srcs=ins.srcs, **c)
        case Setp():
            cmp = {"lo": "ltu", "ls": "leu", "hi": "gtu", "hs": "geu"}.get(ins.cmp, ins.cmp)
            if _unsigned(ins.type) and cmp in ("lt", "le", "gt", "ge"):
                cmp += "u"
            return Flat("setp", type=ins.type, aop=cmp, dst=ins.dst, srcs=(ins.a, ins.b), **c)
        case Selp():
            return Flat("selp", type=ins.type, dst=ins.dst, srcs=(ins.a, ins.b, ins.p), **c)
        case Branch():
            return Flat("bra", label=ins.target, **c)
        case Label():
            return Flat("label", label=ins.name, **c)
        case Ret():
            return Flat("ret", **c)
    raise AssertionError(ins)

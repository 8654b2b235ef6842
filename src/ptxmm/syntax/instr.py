"""Decode one PTX instruction (mnemonic with qualifiers + operands) into a typed instruction of
:mod:`ptxmm.program` (Load, Store, Atom, ...): one handler per instruction family.

Shared by both front ends. Qualifier order follows what ptxas accepts, e.g.
``ld{.weak}{.ss}{.cop}.type``, ``ld.sem.scope{.ss}.type``, ``atom{.sem}{.scope}{.ss}.op.type``;
every rejection names the offending qualifier's column and gives a hint."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ..errors import ParseError, SourcePos, UnsupportedError
from ..program import (
    Addr,
    Alu,
    Atom,
    Barrier,
    Branch,
    Fence,
    Guard,
    Imm,
    Instruction,
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
    Sym,
)

SCOPES = {"cta", "cluster", "gpu", "sys"}
SPACES = {"global": "global", "shared": "shared", "shared::cta": "shared",
          "shared::cluster": "shared"}
TYPES = {f"{k}{n}" for k in "usb" for n in (8, 16, 32, 64)} | {"f32", "f64", "pred", "f16"}
CACHE_HINTS = {"ca", "cg", "cs", "lu", "cv", "wb", "wt", "L1::evict_normal", "L1::evict_unchanged",
               "L1::evict_first", "L1::evict_last", "L1::no_allocate", "L2::64B", "L2::128B",
               "L2::256B", "L2::evict_normal", "L2::evict_first", "L2::evict_last", "L2::cache_hint"}
ATOM_OPS = {"add", "inc", "dec", "exch", "cas", "and", "or", "xor", "min", "max"}
RED_OPS = ATOM_OPS - {"exch", "cas"}
ALU_OPS = {"add", "sub", "mul", "and", "or", "xor", "not", "shl", "shr", "min", "max", "neg"}
CMP_OPS = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"}
KNOWN = ("ld st atom red fence membar mov add sub mul and or xor not shl shr min max neg setp "
         "selp bra ret exit bar barrier").split()


@dataclass
class _Quals:
    """A cursor over the dot-separated qualifiers of one mnemonic, tracking columns."""

    items: list[tuple[str, int]]
    mnemonic: str
    pos: SourcePos | None

    def at(self, col_off: int) -> SourcePos | None:
        if self.pos is None:
            return None
        return SourcePos(self.pos.file, self.pos.line, self.pos.col + col_off)

    def peek(self) -> str | None:
        return self.items[0][0] if self.items else None

    def take(self) -> str:
        return self.items.pop(0)[0]

    def take_if(self, allowed: set[str] | dict) -> str | None:
        if self.items and self.items[0][0] in allowed:
            return self.take()
        return None

    def fail(self, message: str, hint: str | None = None, unsupported: bool = False):
        off = self.items[0][1] if self.items else len(self.mnemonic)
        cls = UnsupportedError if unsupported else ParseError
        raise cls(message, self.at(off), hint)

    def done(self, what: str) -> None:
        if self.items:
            q = self.peek()
            if q in ("v2", "v4", "v8"):
                self.fail(f"vector access .{q} in `{self.mnemonic}`",
                          "write one scalar access per element", unsupported=True)
            self.fail(f"unexpected qualifier .{q} in `{self.mnemonic}`", f"expected form: {what}")


def split_mnemonic(m: str, pos: SourcePos | None) -> tuple[str, _Quals]:
    parts = m.split(".")
    items, off = [], len(parts[0]) + 1
    for p in parts[1:]:
        items.append((p, off))
        off += len(p) + 1
    return parts[0], _Quals(items, m, pos)


def _operands(ops: list[Operand], kinds: str, q: _Quals, form: str) -> list[Operand]:
    """Check operand count and kinds: r=register, v=value (reg/imm/sym), m=memory, l=label."""
    optional = kinds.count("?")
    kinds = kinds.replace("?", "")
    if not (len(kinds) - optional <= len(ops) <= len(kinds)):
        raise ParseError(f"`{q.mnemonic}` takes {len(kinds)} operand(s), got {len(ops)}",
                         q.pos, f"expected form: {form}")
    for i, (k, o) in enumerate(zip(kinds, ops)):
        ok = {"r": isinstance(o, Reg), "v": isinstance(o, (Reg, Imm, Sym)),
              "m": isinstance(o, Addr), "l": isinstance(o, Sym)}[k]
        if not ok:
            what = {"r": "a register", "v": "a register or immediate", "m": "a memory operand [addr]",
                    "l": "a label"}[k]
            raise ParseError(f"operand {i + 1} of `{q.mnemonic}` must be {what}", q.pos,
                             f"expected form: {form}")
    return ops


def _type(q: _Quals, form: str) -> str:
    t = q.take_if(TYPES)
    if t is None:
        nxt = q.peek()
        if nxt in ("v2", "v4", "v8"):
            q.fail(f"vector access .{nxt} in `{q.mnemonic}`",
                   "write one scalar access per element", unsupported=True)
        if nxt in SCOPES or nxt in SPACES or nxt in ("weak", "relaxed", "acquire", "release",
                                                    "acq_rel", "volatile", "mmio", "sc"):
            q.fail(f"qualifier .{nxt} is out of place in `{q.mnemonic}`",
                   f"expected order: {form}")
        q.fail(f"missing or unknown type in `{q.mnemonic}`" + (f" (got .{nxt})" if nxt else ""),
               f"expected form: {form}; types are .u32 .s32 .b32 .u64 .s64 .b64 ...")
    return t


def _space(q: _Quals) -> str | None:
    s = q.take_if(SPACES)
    if s is None and q.peek() in ("local", "const", "param", "tex"):
        q.fail(f"state space .{q.peek()} is outside the memory model", "use .global or .shared",
               unsupported=True)
    return SPACES[s] if s else None


_SEMS = ("relaxed", "acquire", "release", "acq_rel", "weak", "sc")


def _mem_sem(q: _Quals, allowed: set[str], form: str, default: str = "weak") -> tuple:
    """Semantics + scope of ld/st/atom/red: returns (sem, scope, volatile). ``default`` is the
    semantics of an access written without one (weak for ld/st, relaxed for atom/red)."""
    s = q.peek()
    if s in ("mmio", "volatile"):
        return _volatile(q, form)
    if s in _SEMS:
        return _explicit_sem(q, allowed, default)
    if s in SCOPES:
        sc = q.take()
        if default == "weak":
            q.fail(f"scope .{sc} without semantics", f"write .relaxed.{sc} (or .acquire/.release)")
        return default, sc, False
    return default, ("gpu" if default != "weak" else None), False


def _volatile(q: _Quals, form: str) -> tuple:
    """``.mmio.relaxed.sys`` or ``.volatile``: relaxed at system scope, marked volatile."""
    if q.take() == "mmio":
        if q.take_if({"relaxed"}) is None or q.take_if({"sys"}) is None:
            q.fail("`.mmio` must be written `.mmio.relaxed.sys`", f"expected form: {form}")
        return "relaxed", "sys", True
    if q.peek() in SCOPES:
        q.fail("`.volatile` takes no scope (it means relaxed at .sys scope)",
               f"drop the scope, or write {q.mnemonic.split('.')[0]}.relaxed.sys")
    return "relaxed", "sys", True


def _explicit_sem(q: _Quals, allowed: set[str], default: str) -> tuple:
    s = q.peek()
    base = q.mnemonic.split(".")[0]
    if s not in allowed:
        q.fail(f"`.{s}` is not a valid semantics for `{base}`",
               f"allowed: {', '.join('.' + a for a in sorted(allowed))}")
    q.take()
    if s == "weak":
        if q.peek() in SCOPES:
            q.fail("a weak access takes no scope", "drop the scope or use .relaxed.<scope>")
        return "weak", None, False
    sc = q.take_if(SCOPES)
    if sc is None:
        if default == "weak":
            q.fail(f"`.{s}` needs a scope right after it",
                   f"add one of .cta .cluster .gpu .sys, e.g. {base}.{s}.gpu")
        sc = "gpu"
    return s, sc, False


def _skip_cache_hints(q: _Quals) -> None:
    while q.take_if(CACHE_HINTS):
        pass


# ----- one handler per instruction family ---------------------------------------------------------
# Each takes (base mnemonic, qualifier cursor, operands, common fields pos/text/guard) and returns
# the typed instruction, or raises a ParseError/UnsupportedError naming the offending column.


def _ld(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "ld{.weak|.relaxed.scope|.acquire.scope|.volatile}{.global|.shared}.type d, [a]"
    if q.peek() == "global" and len(q.items) > 1 and q.items[1][0] == "nc":
        q.take()
        q.fail("ld.global.nc (non-coherent texture path) is outside the memory model",
               "use ld.global or ld.relaxed.<scope>.global", unsupported=True)
    sem, scope, vol = _mem_sem(q, {"weak", "relaxed", "acquire"}, form)
    space = _space(q)
    _skip_cache_hints(q)
    ty = _type(q, form)
    q.done(form)
    d, a = _operands(ops, "rm", q, form)
    return Load(sem=sem, scope=scope, space=space, type=ty, dst=d, addr=a, volatile=vol, **c)


def _st(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "st{.weak|.relaxed.scope|.release.scope|.volatile}{.global|.shared}.type [a], b"
    sem, scope, vol = _mem_sem(q, {"weak", "relaxed", "release"}, form)
    space = _space(q)
    _skip_cache_hints(q)
    ty = _type(q, form)
    q.done(form)
    a, v = _operands(ops, "mv", q, form)
    return Store(sem=sem, scope=scope, space=space, type=ty, addr=a, src=v, volatile=vol, **c)


def _rmw_quals(base: str, q: _Quals, sems: set[str], opset: set[str], form: str) -> dict:
    """Qualifiers of atom/red: ``{.sem}{.scope}{.space}.op.type`` → the instruction's fields."""
    sem, scope, _ = _mem_sem(q, sems, form, default="relaxed")
    space = _space(q)
    op = q.take_if(opset)
    if op is None:
        q.fail(f"missing or unknown {base} operation" + (f" .{q.peek()}" if q.peek() else ""),
               f"operations: {', '.join(sorted(opset))}")
    ty = _type(q, form)
    q.done(form)
    return dict(sem=sem, scope=scope, space=space, op=op, type=ty)


def _atom(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "atom{.sem}{.scope}{.global|.shared}.op.type d, [a], b{, c}"
    f = _rmw_quals(base, q, {"relaxed", "acquire", "release", "acq_rel"}, ATOM_OPS, form)
    d, a, *srcs = _operands(ops, "rmvv" if f["op"] == "cas" else "rmv", q, form)
    return Atom(dst=d, addr=a, srcs=tuple(srcs), **f, **c)


def _red(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "red{.sem}{.scope}{.global|.shared}.op.type [a], b"
    f = _rmw_quals(base, q, {"relaxed", "release"}, RED_OPS, form)
    a, v = _operands(ops, "mv", q, form)
    return Red(addr=a, src=v, **f, **c)


def _fence(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "fence{.sc|.acq_rel|.acquire|.release}.scope  or  fence.proxy.alias"
    if q.peek() == "proxy":
        q.take()
        kind = q.take_if({"alias"})
        if kind is None:
            q.fail(f"proxy fence .{q.peek()}" if q.peek() else "fence.proxy without a kind",
                   "only fence.proxy.alias is supported", unsupported=True)
        q.done("fence.proxy.alias")
        _operands(ops, "", q, "fence.proxy.alias")
        return ProxyFence(kind=kind, **c)
    sem = q.take_if({"sc", "acq_rel", "acquire", "release"}) or "acq_rel"
    if q.peek() in ("op_restrict", "mbarrier_init", "sync_restrict"):
        q.fail(f"restricted fence .{q.peek()}", "only unrestricted fences are modelled",
               unsupported=True)
    scope = q.take_if(SCOPES)
    if scope is None:
        q.fail("fence needs a scope", "add one of .cta .cluster .gpu .sys")
    q.done(form)
    _operands(ops, "", q, form)
    return Fence(sem=sem, scope=scope, **c)


def _membar(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "membar.cta | membar.gl | membar.sys | membar.proxy.alias"
    if q.peek() == "proxy":
        q.take()
        if q.take_if({"alias"}) is None:
            q.fail("unknown membar.proxy kind", "only membar.proxy.alias is supported",
                   unsupported=True)
        q.done(form)
        return ProxyFence(kind="alias", **c)
    lvl = q.take_if({"cta", "gl", "sys"})
    if lvl is None:
        q.fail("membar needs a level", f"expected form: {form}")
    q.done(form)
    _operands(ops, "", q, form)
    return Fence(sem="sc", scope={"cta": "cta", "gl": "gpu", "sys": "sys"}[lvl], **c)


def _bar(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = f"{base}{{.cta}}.sync a{{, b}} | {base}{{.cta}}.arrive a, b"
    if q.peek() in ("warp", "cluster"):
        q.fail(f"{base}.{q.peek()} barriers", "only CTA barriers are supported", unsupported=True)
    q.take_if({"cta"})
    kind = q.take_if({"sync", "arrive", "red"})
    if kind is None:
        q.fail(f"{base} needs .sync or .arrive", f"expected form: {form}")
    if kind == "red":
        q.fail("bar.red", "use bar.sync", unsupported=True)
    q.take_if({"aligned"})
    q.done(form)
    if len(ops) > 2 and isinstance(ops[-1], (Imm, Reg)):
        ops = ops[:2]  # Dat3M spelling `bar.cta.sync id, count, nthreads`: count is ops[1]
    ident, *count = _operands(ops, "vv" if kind == "arrive" else "vv?", q, form)
    return Barrier(kind=kind, ids=(ident,), count=count[0] if count else None, **c)


def _mov(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "mov.type d, a"
    ty = _type(q, form)
    q.done(form)
    d, a = _operands(ops, "rv", q, form)
    return Mov(type=ty, dst=d, src=a, **c)


def _alu(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    unary = base in ("not", "neg")
    form = f"{base}.type d, a" + ("" if unary else ", b")
    q.take_if({"lo", "wide", "hi"})
    q.take_if({"sat"})
    ty = _type(q, form)
    q.done(form)
    d, *srcs = _operands(ops, "rv" if unary else "rvv", q, form)
    return Alu(op=base, type=ty, dst=d, srcs=tuple(srcs), **c)


def _setp(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "setp.cmp.type p, a, b"
    cmp = q.take_if(CMP_OPS)
    if cmp is None:
        q.fail("setp needs a comparison", "one of .eq .ne .lt .le .gt .ge (.lo .ls .hi .hs)")
    ty = _type(q, form)
    q.done(form)
    p, a, b = _operands(ops, "rvv", q, form)
    return Setp(cmp=cmp, type=ty, dst=p, a=a, b=b, **c)


def _selp(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "selp.type d, a, b, p"
    ty = _type(q, form)
    q.done(form)
    d, a, b, p = _operands(ops, "rvvr", q, form)
    return Selp(type=ty, dst=d, a=a, b=b, p=p, **c)


def _bra(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    q.take_if({"uni"})
    q.done("bra{.uni} LABEL")
    (lab,) = _operands(ops, "l", q, "bra{.uni} LABEL")
    return Branch(target=lab.name, **c)


def _ret(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    q.done(base)
    _operands(ops, "", q, base)
    return Ret(**c)


_HANDLERS = {"ld": _ld, "st": _st, "atom": _atom, "red": _red, "fence": _fence, "membar": _membar,
             "bar": _bar, "barrier": _bar, "mov": _mov, "setp": _setp, "selp": _selp, "bra": _bra,
             "ret": _ret, "exit": _ret, **{op: _alu for op in ALU_OPS}}


def decode(mnemonic: str, ops: list[Operand], pos: SourcePos | None, text: str = "",
           guard: Guard | None = None) -> Instruction:
    """One instruction, typed and with its qualifiers normalised (see program.py)."""
    base, q = split_mnemonic(mnemonic, pos)
    handler = _HANDLERS.get(base)
    if handler is None:
        close = difflib.get_close_matches(base, KNOWN, n=1)
        hint = f"did you mean `{close[0]}`?" if close else (
            "supported: ld st atom red fence membar bar mov add sub mul and or xor setp selp bra ret")
        raise UnsupportedError(f"unknown instruction `{base}`", pos, hint)
    return handler(base, q, ops, dict(pos=pos, text=text or mnemonic, guard=guard))

"""Decode one PTX instruction (mnemonic with qualifiers + operands) into an :class:`Instruction`.

Shared by both front ends. Qualifier order follows what ptxas accepts, e.g.
``ld{.weak}{.ss}{.cop}.type``, ``ld.sem.scope{.ss}.type``, ``atom{.sem}{.scope}{.ss}.op.type``;
every rejection names the offending qualifier's column and gives a hint."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParseError, SourcePos, UnsupportedError
from ..program import (
    Addr,
    Alu,
    Atom,
    Barrier,
    Branch,
    Fence,
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


def _mem_sem(q: _Quals, allowed: set[str], form: str, default: str = "weak") -> tuple:
    """Semantics + scope of ld/st: returns (sem, scope, volatile)."""
    s = q.peek()
    if s == "mmio":
        q.take()
        if q.take_if({"relaxed"}) is None or q.take_if({"sys"}) is None:
            q.fail("`.mmio` must be written `.mmio.relaxed.sys`", f"expected form: {form}")
        return "relaxed", "sys", True
    if s == "volatile":
        q.take()
        if q.peek() in SCOPES:
            q.fail("`.volatile` takes no scope (it means relaxed at .sys scope)",
                   f"drop the scope, or write {q.mnemonic.split('.')[0]}.relaxed.sys")
        return "relaxed", "sys", True
    if s in ("relaxed", "acquire", "release", "acq_rel", "weak", "sc"):
        if s not in allowed:
            q.fail(f"`.{s}` is not a valid semantics for `{q.mnemonic.split('.')[0]}`",
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
                       "add one of .cta .cluster .gpu .sys, e.g. "
                       f"{q.mnemonic.split('.')[0]}.{s}.gpu")
            sc = "gpu"
        return s, sc, False
    if s in SCOPES:
        sc = q.take()
        if default == "weak":
            q.fail(f"scope .{sc} without semantics", f"write .relaxed.{sc} (or .acquire/.release)")
        return default, sc, False
    return default, ("gpu" if default != "weak" else None), False


def decode(mnemonic: str, ops: list[Operand], pos: SourcePos | None, text: str = "",
           guard: tuple[Reg, bool] | None = None) -> Instruction:
    base, q = split_mnemonic(mnemonic, pos)
    common = dict(pos=pos, text=text or mnemonic, guard=guard)

    if base == "ld":
        form = "ld{.weak|.relaxed.scope|.acquire.scope|.volatile}{.global|.shared}.type d, [a]"
        if q.peek() == "global" and len(q.items) > 1 and q.items[1][0] == "nc":
            q.take()
            q.fail("ld.global.nc (non-coherent texture path) is outside the memory model",
                   "use ld.global or ld.relaxed.<scope>.global", unsupported=True)
        sem, scope, vol = _mem_sem(q, {"weak", "relaxed", "acquire"}, form)
        space = _space(q)
        while q.take_if(CACHE_HINTS):
            pass
        ty = _type(q, form)
        q.done(form)
        d, a = _operands(ops, "rm", q, form)
        return Load(sem=sem, scope=scope, space=space, type=ty, dst=d, addr=a, volatile=vol, **common)
    if base == "st":
        form = "st{.weak|.relaxed.scope|.release.scope|.volatile}{.global|.shared}.type [a], b"
        sem, scope, vol = _mem_sem(q, {"weak", "relaxed", "release"}, form)
        space = _space(q)
        while q.take_if(CACHE_HINTS):
            pass
        ty = _type(q, form)
        q.done(form)
        a, v = _operands(ops, "mv", q, form)
        return Store(sem=sem, scope=scope, space=space, type=ty, addr=a, src=v, volatile=vol, **common)
    if base in ("atom", "red"):
        is_atom = base == "atom"
        form = (f"{base}{{.sem}}{{.scope}}{{.global|.shared}}.op.type "
                + ("d, [a], b{, c}" if is_atom else "[a], b"))
        sems = {"relaxed", "acquire", "release", "acq_rel"} if is_atom else {"relaxed", "release"}
        sem, scope, _ = _mem_sem(q, sems, form, default="relaxed")
        space = _space(q)
        opset = ATOM_OPS if is_atom else RED_OPS
        aop = q.take_if(opset)
        if aop is None:
            q.fail(f"missing or unknown {base} operation" + (f" .{q.peek()}" if q.peek() else ""),
                   f"operations: {', '.join(sorted(opset))}")
        ty = _type(q, form)
        q.done(form)
        if is_atom:
            kinds = "rmvv" if aop == "cas" else "rmv"
            operands = _operands(ops, kinds, q, form)
            return Atom(sem=sem, scope=scope, space=space, type=ty, op=aop, dst=operands[0],
                        addr=operands[1], srcs=tuple(operands[2:]), **common)
        a, v = _operands(ops, "mv", q, form)
        return Red(sem=sem, scope=scope, space=space, type=ty, op=aop, addr=a, src=v, **common)
    if base == "fence":
        form = "fence{.sc|.acq_rel|.acquire|.release}.scope  or  fence.proxy.alias"
        if q.peek() == "proxy":
            q.take()
            kind = q.take_if({"alias"})
            if kind is None:
                q.fail(f"proxy fence .{q.peek()}" if q.peek() else "fence.proxy without a kind",
                       "only fence.proxy.alias is supported", unsupported=True)
            q.done("fence.proxy.alias")
            _operands(ops, "", q, "fence.proxy.alias")
            return ProxyFence(kind=kind, **common)
        sem = q.take_if({"sc", "acq_rel", "acquire", "release"}) or "acq_rel"
        if q.peek() in ("op_restrict", "mbarrier_init", "sync_restrict"):
            q.fail(f"restricted fence .{q.peek()}", "only unrestricted fences are modelled",
                   unsupported=True)
        scope = q.take_if(SCOPES)
        if scope is None:
            q.fail("fence needs a scope", "add one of .cta .cluster .gpu .sys")
        q.done(form)
        _operands(ops, "", q, form)
        return Fence(sem=sem, scope=scope, **common)
    if base == "membar":
        form = "membar.cta | membar.gl | membar.sys | membar.proxy.alias"
        if q.peek() == "proxy":
            q.take()
            if q.take_if({"alias"}) is None:
                q.fail("unknown membar.proxy kind", "only membar.proxy.alias is supported",
                       unsupported=True)
            q.done(form)
            return ProxyFence(kind="alias", **common)
        lvl = q.take_if({"cta", "gl", "sys"})
        if lvl is None:
            q.fail("membar needs a level", f"expected form: {form}")
        q.done(form)
        _operands(ops, "", q, form)
        scope = {"cta": "cta", "gl": "gpu", "sys": "sys"}[lvl]
        return Fence(sem="sc", scope=scope, **common)
    if base in ("bar", "barrier"):
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
        operands = _operands(ops, "vv" if kind == "arrive" else "vv?", q, form)
        return Barrier(kind=kind, ids=(operands[0],), count=operands[1] if len(operands) > 1 else None,
                       **common)
    if base == "mov":
        form = "mov.type d, a"
        ty = _type(q, form)
        q.done(form)
        d, a = _operands(ops, "rv", q, form)
        return Mov(type=ty, dst=d, src=a, **common)
    if base in ALU_OPS:
        form = f"{base}.type d, a" + ("" if base in ("not", "neg") else ", b")
        q.take_if({"lo", "wide", "hi"})
        q.take_if({"sat"})
        ty = _type(q, form)
        q.done(form)
        kinds = "rv" if base in ("not", "neg") else "rvv"
        operands = _operands(ops, kinds, q, form)
        return Alu(op=base, type=ty, dst=operands[0], srcs=tuple(operands[1:]), **common)
    if base == "setp":
        form = "setp.cmp.type p, a, b"
        cmp = q.take_if(CMP_OPS)
        if cmp is None:
            q.fail("setp needs a comparison", "one of .eq .ne .lt .le .gt .ge (.lo .ls .hi .hs)")
        ty = _type(q, form)
        q.done(form)
        p, a, b = _operands(ops, "rvv", q, form)
        return Setp(cmp=cmp, type=ty, dst=p, a=a, b=b, **common)
    if base == "selp":
        form = "selp.type d, a, b, p"
        ty = _type(q, form)
        q.done(form)
        d, a, b, p = _operands(ops, "rvvr", q, form)
        return Selp(type=ty, dst=d, a=a, b=b, p=p, **common)
    if base == "bra":
        q.take_if({"uni"})
        q.done("bra{.uni} LABEL")
        (lab,) = _operands(ops, "l", q, "bra{.uni} LABEL")
        return Branch(target=lab.name, **common)
    if base in ("ret", "exit"):
        q.done(base)
        _operands(ops, "", q, base)
        return Ret(**common)
    import difflib

    close = difflib.get_close_matches(base, KNOWN, n=1)
    hint = f"did you mean `{close[0]}`?" if close else (
        "supported: ld st atom red fence membar bar mov add sub mul and or xor setp selp bra ret")
    raise UnsupportedError(f"unknown instruction `{base}`", pos, hint)

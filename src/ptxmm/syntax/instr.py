"""Decode one PTX instruction (mnemonic with qualifiers + operands) into a typed instruction of
:mod:`ptxmm.program` (Load, Store, Atom, ...): one handler per instruction family.

Qualifier order follows what ptxas accepts, e.g. ``ld{.weak}{.ss}{.cop}.type``,
``ld.sem.scope{.ss}.type``, ``atom{.sem}{.scope}{.ss}.op.type``; every rejection names the
offending qualifier's column and gives a hint.

Proxy instructions (docs/ptx-proxies.md) in their litmus-sized forms. These accepted forms were
assembled by ``ptxas -arch=sm_90`` (CUDA 13.0, ``.version 8.0``; 64-bit ``sured.b.min/max`` need
``.version 8.1``) in a kernel declaring ``.global .texref t; .global .surfref s; .const .u32 c;``
(tests/test_ptx_proxy_syntax.py repeats the check where ptxas is installed)::

    ld.const.u32 %r0, [c];                  ld.weak.const.ca.u32 %r0, [c];
    tex.1d.v4.s32.s32 {%r0, %r1, %r2, %r3}, [t, {%c0}];
    tex.base.1d.v4.u32.s32 {%r0, _, _, _}, [t, {0}];
    tex.1d.v4.s32.s32 {%r0, %r1, %r2, %r3}, [t, %c0];
    suld.b.1d.b32.trap {%r0}, [s, {%c0}];   suld.b.1d.cg.b64.zero %rd0, [s, %c0];
    sust.b.1d.b32.clamp [s, {0}], {%r0};    sust.b.1d.wt.b32.trap [s, {0}], 5;
    sured.b.add.1d.u32.trap [s, {0}], %r0;  sured.b.and.1d.b32.zero [s, {0}], 1;
    fence.proxy.alias;                      membar.proxy.alias;

``fence.proxy.async{.global,.shared::cta,.shared::cluster}`` is modelled (docs/hopper.md);
``fence.proxy.tensormap::*`` and the uni-directional ``fence.proxy.async::generic.*`` assemble
but are not modelled yet (UnsupportedError). ptxas rejects, and so do we:
``ld.relaxed``/``ld.acquire``/``ld.volatile`` on ``.const``, ``st.const``, ``tex.1d.s32.s32``
(needs .v4), ``tex.1d.v4.s32.u32`` (integer coordinates are .s32), ``suld``/``sust``/``sured``
without a clamp mode, ``suld.p``, ``sust.b.1d.u32``, ``sust`` with ``.ca``, ``suld`` with ``.wb``,
``sured.b.xor``/``.inc`` (ptxas crashes), ``sured.b.and.u32``, ``sured.b.add.s64``, a bare
immediate coordinate ``[s, 0]``, ``suatom`` (no such instruction), ``membar.proxy.async``, and
``fence.proxy.texture|surface|constant|generic`` (``Unknown modifier``). We accept
``fence.proxy.texture|surface|constant`` all the same: they are Dat3M's spelling of the
texture/surface/constant proxy fences, for which the PTX ISA has none."""

from __future__ import annotations

import difflib
import re
from dataclasses import field

from .._infra.records import record
from ..errors import ParseError, SourcePos, UnsupportedError
from ..ir.program import (
    Addr,
    Alu,
    AsyncStore,
    Atom,
    Barrier,
    Branch,
    BulkCopy,
    BulkGroup,
    ClusterBarrier,
    CpAsync,
    CpAsyncGroup,
    Elect,
    Fence,
    Guard,
    Imm,
    Instruction,
    Load,
    Mapa,
    MBarrier,
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
    TensorCopy,
    TensorMapReplace,
    Wgmma,
)
from .check import did_you_mean
from .ptx_isa import PTX_OPCODES

SCOPES = {"cta", "cluster", "gpu", "sys"}
SPACES = {"global": "global", "shared": "shared", "shared::cta": "shared",
          "shared::cluster": "shared"}
TYPES = {f"{k}{n}" for k in "usb" for n in (8, 16, 32, 64)} | {"f32", "f64", "pred", "f16"}
CACHE_HINTS = {"ca", "cg", "cs", "lu", "cv", "wb", "wt", "L1::evict_normal", "L1::evict_unchanged",
               "L1::evict_first", "L1::evict_last", "L1::no_allocate", "L2::64B", "L2::128B",
               "L2::256B", "L2::evict_normal", "L2::evict_first", "L2::evict_last", "L2::cache_hint"}
ATOM_OPS = {"add", "inc", "dec", "exch", "cas", "and", "or", "xor", "min", "max"}
RED_OPS = ATOM_OPS - {"exch", "cas"}
ALU_OPS = {"add", "sub", "mul", "div", "rem", "and", "or", "xor", "not", "shl", "shr", "min", "max",
           "neg"}
CMP_OPS = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"}
KNOWN = ("ld st atom red fence membar mov add sub mul div rem and or xor not shl shr min max neg setp "
         "selp bra ret exit bar barrier tex tld4 suld sust sured mbarrier mapa cp wgmma elect "
         "tensormap").split()
# proxy fences: the ISA's fence.proxy.alias and fence.proxy.async, and Dat3M's
# texture/surface/constant proxy fences
PROXY_FENCE_KINDS = ("alias", "texture", "surface", "constant", "async")
GEOMS = {"1d", "2d", "3d", "a1d", "a2d", "cube", "acube", "2dms", "a2dms"}
CLAMP = {"trap", "clamp", "zero"}
SULD_COPS = {"ca", "cg", "cs", "cv"}
SUST_COPS = {"wb", "cg", "cs", "wt"}
SURED_TYPES = {"add": {"u32", "u64", "s32"}, "min": {"u32", "s32", "u64", "s64"},
               "max": {"u32", "s32", "u64", "s64"}, "and": {"b32"}, "or": {"b32"}}
# other tools' spellings someone may type in a .ptx test, with the PTX to write instead
FOREIGN = {
    "tld": "Dat3M's texture load; in PTX write tex.1d.v4.s32.s32 {%r0, _, _, _}, [t, {0}];",
    "cold": "Dat3M's constant load; in PTX write ld.const.u32 %r0, [c];",
    "suatom": "Dat3M's surface atomic; PTX has no surface atomic with a result (only sured)",
}


@record
class Vec:
    """A brace-enclosed vector operand ``{%r0, _, _, _}``; ``_`` (PTX's sink) is ``Sym("_")``.
    Front-end only: decoded into the scalar operands of the IR."""

    items: tuple[Operand, ...]
    pair: bool = False  # `d|p` (elect.sync's destinations), not `{...}`


@record
class Handle:
    """A texture/surface operand ``[t, {c}]``: the reference's name and its coordinates.
    Front-end only: the IR keeps ``addr``; ptx.py checks register coordinates."""

    addr: Addr
    coords: tuple[Operand, ...] = field(default=())


SINK = Sym("_")


@record(frozen=False)
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

    def fail(self, message: str, hint: str | None = None, unsupported: bool = False,
             typo: bool = False):
        """Raise at the current qualifier (or just after the mnemonic). With ``typo`` (the
        generic rejections: a missing type, scope or operation, a qualifier left over), a
        qualifier that no instruction knows and that is close to one this instruction takes is
        reported as a misspelling: ``st.relase.gpu`` → unknown qualifier `.relase`, did you mean
        `.release`?"""
        off = self.items[0][1] if self.items else len(self.mnemonic)
        cls = UnsupportedError if unsupported else ParseError
        if typo and self.items:
            message, hint = _misspelt(self.mnemonic, self.items[0][0], message, hint)
        raise cls(message, self.at(off), hint)

    def done(self, what: str) -> None:
        if self.items:
            q = self.peek()
            if q in ("v2", "v4", "v8"):
                self.fail(f"vector access .{q} in `{self.mnemonic}`",
                          "write one scalar access per element", unsupported=True)
            self.fail(f"unexpected qualifier .{q} in `{self.mnemonic}`", f"expected form: {what}",
                      typo=True)


def split_mnemonic(m: str, pos: SourcePos | None) -> tuple[str, _Quals]:
    parts = m.split(".")
    items, off = [], len(parts[0]) + 1
    for p in parts[1:]:
        items.append((p, off))
        off += len(p) + 1
    return parts[0], _Quals(items, m, pos)


_KINDS = {"r": Reg, "v": (Reg, Imm, Sym), "m": Addr, "l": Sym, "h": Handle, "V": Vec, "d": Reg,
          "s": (Reg, Imm)}


def _operands(ops: list, kinds: str, q: _Quals, form: str) -> list:
    """Check operand count and kinds: r=register, v=value (reg/imm/sym), m=memory, l=label,
    h=texture/surface operand ``[name, coords]``, V=vector ``{...}``, d=a register or a one-element
    vector of one, s=a value or a one-element vector of one (returned unwrapped)."""
    optional = kinds.count("?")
    kinds = kinds.replace("?", "")
    if not (len(kinds) - optional <= len(ops) <= len(kinds)):
        raise ParseError(f"`{q.mnemonic}` takes {len(kinds)} operand(s), got {len(ops)}",
                         q.pos, f"expected form: {form}")
    out = []
    for i, (k, o) in enumerate(zip(kinds, ops)):
        if k in "ds" and isinstance(o, Vec) and len(o.items) == 1:
            o = o.items[0]
        if not (isinstance(o, _KINDS[k]) and (k != "d" or o != SINK)):
            what = {"r": "a register", "v": "a register or immediate", "m": "a memory operand [addr]",
                    "l": "a label", "h": "a texture/surface operand [name, {coordinate}]",
                    "V": "a vector {...}", "d": "a register (or {register})",
                    "s": "a register or immediate (or {one of them})"}[k]
            raise ParseError(f"operand {i + 1} of `{q.mnemonic}` must be {what}", q.pos,
                             f"expected form: {form}")
        out.append(o)
    return out


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
               f"expected form: {form}; types are .u32 .s32 .b32 .u64 .s64 .b64 ...", typo=True)
    return t


def _space(q: _Quals) -> str | None:
    s = q.take_if(SPACES)
    if s is None and q.peek() == "const":
        q.fail(f"`{q.mnemonic.split('.')[0]}` cannot write the constant state space .const",
               "the constant bank is read-only: read it with ld.const, write the data location "
               "it aliases with st.global")
    if s is None and q.peek() in ("local", "param", "tex"):
        q.fail(f"state space .{q.peek()} is outside the memory model", "use .global or .shared",
               unsupported=True)
    return SPACES[s] if s else None


def _mmio_space(q: _Quals, mmio: bool) -> str | None:
    """The state space of ld/st; an ``.mmio`` access is to .global (or generic) memory."""
    if mmio and q.peek() in SPACES and SPACES[q.peek()] == "shared":
        q.fail(f"an .mmio access to .{q.peek()} memory", "memory-mapped I/O is .global: write "
               "ld.mmio.relaxed.sys.global (or no state space)")
    return _space(q)


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
                   f"add one of .cta .cluster .gpu .sys, e.g. {base}.{s}.gpu", typo=True)
        sc = "gpu"
    return s, sc, False


def _skip_cache_hints(q: _Quals) -> None:
    while q.take_if(CACHE_HINTS):
        pass


_LD_COPS = {"ca", "cg", "cs", "lu", "cv"}
_ST_COPS = {"wb", "cg", "cs", "wt"}
_PREFETCH = {"L2::64B", "L2::128B", "L2::256B"}


@record
class _Access:
    """What the cache qualifiers of one ld/st must agree with (ptxas -arch=sm_90a's rules)."""

    base: str  # ld | st
    sem: str
    volatile: bool
    mmio: bool
    shared: bool


def _cache_hints(q: _Quals, acc: _Access) -> None:
    """The cache operator, eviction priorities, prefetch size and cache hint of ld/st, each
    checked where it stands, as ptxas checks them (the memory model gives them no meaning, but a
    program ptxas refuses is not one to answer for)."""
    seen: set[str] = set()
    while q.peek() in CACHE_HINTS:
        h = q.peek()
        problem = _hint_problem(h, acc, seen)
        if problem is not None:
            q.fail(*problem)
        if h == "L2::cache_hint":
            q.fail(f"the cache-policy operand of `.L2::cache_hint` in `{q.mnemonic}`",
                   "it is a performance hint: drop .L2::cache_hint and its 64-bit operand",
                   unsupported=True)
        seen.add(q.take())


def _hint_problem(h: str, acc: _Access, seen: set[str]) -> tuple[str, str] | None:
    """Why ptxas refuses the cache qualifier ``h`` of this access (None: it takes it)."""
    base, mine = acc.base, (_LD_COPS if acc.base == "ld" else _ST_COPS)
    other = "st" if base == "ld" else "ld"
    if h in _LD_COPS | _ST_COPS:
        if h not in mine:
            return (f"`.{h}` is a cache operator of {other}, not of {base}",
                    f"{base} takes " + " ".join("." + c for c in sorted(mine)))
        if acc.volatile:
            return (f"a {'.mmio' if acc.mmio else '.volatile'} access takes no cache operator (.{h})",
                    "drop the cache operator")
        if acc.sem != "weak":
            return (f"a cache operator (.{h}) goes with a weak {base} only, not .{acc.sem}",
                    f"drop .{h}, or write a weak {base}")
        if any(x.startswith("L1::") for x in seen):
            return (f"a cache operator (.{h}) after an L1 eviction priority", "keep one of the two")
        return None
    where = _hint_place(h, acc)
    if where is not None:
        return where
    if h.startswith("L1::") and seen & (_LD_COPS | _ST_COPS):
        return (f"an L1 eviction priority (.{h}) with a cache operator", "keep one of the two")
    if h.startswith("L2::evict"):
        return (f"`.{h}` needs a 256-bit vector access (.v8.b32 or .v4.b64)",
                "ptxas refuses it on a scalar access; drop it")
    return None


def _hint_place(h: str, acc: _Access) -> tuple[str, str] | None:
    """The state-space and access-kind rules of eviction priorities, prefetch sizes and hints."""
    if h in _PREFETCH and acc.base == "st":
        return f"a prefetch size (.{h}) on st", "only ld prefetches: drop it"
    if acc.mmio:
        return f"an .mmio access takes no cache qualifier (.{h})", "drop it"
    if acc.shared:
        return (f"`.{h}` on a .shared access", "eviction priorities, prefetch sizes and cache "
                "hints apply to .global (or generic) accesses: drop it")
    if acc.volatile and not (h in _PREFETCH and acc.base == "ld"):
        return f"a .volatile access takes no `.{h}`", "drop it"
    return None


# ----- one handler per instruction family ---------------------------------------------------------
# Each takes (base mnemonic, qualifier cursor, operands, common fields pos/text/guard) and returns
# the typed instruction, or raises a ParseError/UnsupportedError naming the offending column.


def _ld(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "ld{.weak|.relaxed.scope|.acquire.scope|.volatile}{.global|.shared}.type d, [a]"
    if "const" in (i[0] for i in q.items):
        return _ld_const(q, ops, c)
    if q.peek() == "global" and len(q.items) > 1 and q.items[1][0] == "nc":
        q.take()
        q.fail("ld.global.nc (non-coherent texture path) is outside the memory model",
               "use ld.global or ld.relaxed.<scope>.global", unsupported=True)
    mmio = q.peek() == "mmio"
    sem, scope, vol = _mem_sem(q, {"weak", "relaxed", "acquire"}, form)
    space = _mmio_space(q, mmio)
    _cache_hints(q, _Access(base, sem, vol, mmio, space == "shared"))
    ty = _type(q, form)
    q.done(form)
    d, a = _operands(ops, "rm", q, form)
    return Load(sem=sem, scope=scope, space=space, type=ty, dst=d, addr=a, volatile=vol, **c)


def _ld_const(q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``ld{.weak}.const{.cop}.type d, [c]``: a weak load through the constant proxy."""
    form = "ld{.weak}.const{.cop}.type d, [c]"
    q.take_if({"weak"})
    if q.peek() != "const":
        q.fail(f"`.{q.peek()}` cannot be applied to the .const state space",
               "a constant-bank load is weak: write ld.const.u32 (or ld.weak.const.u32)")
    q.take()
    _skip_cache_hints(q)
    ty = _type(q, form)
    q.done(form)
    d, a = _operands(ops, "rm", q, form)
    if not isinstance(a.base, Sym):
        raise UnsupportedError("ld.const through a register address", q.pos,
                               "name the constant alias: ld.const.u32 %r0, [c];")
    return Load(sem="weak", scope=None, space=None, proxy="constant", type=ty, dst=d, addr=a, **c)


def _st(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    if q.take_if({"async"}):
        return _async_store(base, q, ops, c)
    form = "st{.weak|.relaxed.scope|.release.scope|.volatile}{.global|.shared}.type [a], b"
    mmio = q.peek() == "mmio"
    sem, scope, vol = _mem_sem(q, {"weak", "relaxed", "release"}, form)
    space = _mmio_space(q, mmio)
    _cache_hints(q, _Access(base, sem, vol, mmio, space == "shared"))
    ty = _type(q, form)
    q.done(form)
    a, v = _operands(ops, "mv", q, form)
    return Store(sem=sem, scope=scope, space=space, type=ty, addr=a, src=v, volatile=vol, **c)


def _rmw_quals(base: str, q: _Quals, sems: set[str], opset: set[str], form: str) -> dict:
    """Qualifiers of atom/red: ``{.sem}{.scope}{.space}.op.type`` → the instruction's fields."""
    if q.peek() in ("volatile", "mmio"):  # ptxas: "Illegal modifier '.volatile' for instruction 'atom'"
        q.fail(f"`.{q.peek()}` is not a qualifier of {base}",
               f"only ld and st take .volatile and .mmio; write {base}.relaxed.sys for a relaxed "
               "RMW at system scope")
    sem, scope, _ = _mem_sem(q, sems, form, default="relaxed")
    space = _space(q)
    op = q.take_if(opset)
    if op is None:
        q.fail(f"missing or unknown {base} operation" + (f" .{q.peek()}" if q.peek() else ""),
               f"operations: {', '.join(sorted(opset))}", typo=True)
    ty = _type(q, form)
    q.done(form)
    return dict(sem=sem, scope=scope, space=space, op=op, type=ty)


def _atom(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "atom{.sem}{.scope}{.global|.shared}.op.type d, [a], b{, c}"
    f = _rmw_quals(base, q, {"relaxed", "acquire", "release", "acq_rel"}, ATOM_OPS, form)
    d, a, *srcs = _operands(ops, "rmvv" if f["op"] == "cas" else "rmv", q, form)
    return Atom(dst=d, addr=a, srcs=tuple(srcs), **f, **c)


def _async_store(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``st.async{.weak}.shared::cluster.mbarrier::complete_tx::bytes.type [a], b, [mbar]``,
    ``red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.op.type [a], b,
    [mbar]`` (one 32-bit word; docs/hopper.md)."""
    tail = ".shared::cluster.mbarrier::complete_tx::bytes"
    form = (f"st.async{{.weak}}{tail}.b32|.u32|.s32 [a], b, [mbar] | red.async.relaxed.cluster{tail}"
            ".op.u32|.s32|.b32 [a], b, [mbar]")
    op = None
    if base == "st":
        q.take_if({"weak"})
    elif q.take_if({"relaxed"}) is None or q.take_if({"cluster"}) is None:
        q.fail(f"`{q.mnemonic}` needs .relaxed.cluster", f"expected form: {form}")
    if q.take_if({"shared::cluster"}) is None or q.take_if({"mbarrier::complete_tx::bytes"}) is None:
        q.fail(f"`{q.mnemonic}`: the modelled forms store into .shared::cluster with an mbarrier",
               f"expected form: {form}", unsupported=True)
    if base == "red":
        op = q.take_if({"add", "inc", "dec", "min", "max", "and", "or", "xor"})
        if op is None:
            q.fail(f"`{q.mnemonic}` needs an operation", f"expected form: {form}", typo=True)
    ty = q.take_if({"b32", "u32", "s32"})
    if ty is None:
        q.fail(f"`{q.mnemonic}`: one 32-bit word (.b32 .u32 .s32)", f"expected form: {form}",
               unsupported=True)
    q.done(form)
    a, v, m = _operands(ops, "mvm", q, form)
    return AsyncStore(addr=a, src=v, mbar=m, type=ty, op=op, **c)


def _red(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    if q.take_if({"async"}):
        return _async_store(base, q, ops, c)
    form = "red{.sem}{.scope}{.global|.shared}.op.type [a], b"
    f = _rmw_quals(base, q, {"relaxed", "release"}, RED_OPS, form)
    a, v = _operands(ops, "mv", q, form)
    return Red(addr=a, src=v, **f, **c)


def _proxy_fence(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``fence.proxy.alias`` / ``membar.proxy.alias``, ``fence.proxy.async{.global|.shared::cta|
    .shared::cluster}`` (PTX ISA) and ``fence.proxy.texture|surface|constant`` (Dat3M's spelling;
    the ISA has none). The tensormap proxy and the uni-directional async fences are not modelled."""
    form = ("fence.proxy.alias | membar.proxy.alias | fence.proxy.async{.global|.shared::cta|"
            ".shared::cluster} | fence.proxy.texture | fence.proxy.surface | fence.proxy.constant")
    kind = q.peek()
    if kind is None:
        q.fail(f"{base}.proxy needs a proxy kind", f"expected form: {form}")
    root = kind.split("::")[0]
    if base == "membar" and kind != "alias" and (
            kind in PROXY_FENCE_KINDS or root in ("async", "tensormap")):
        q.fail(f"membar.proxy.{kind} is not PTX", f"write fence.proxy.{kind}")
    if kind == "async::generic":
        return _uni_async_fence(q, ops, c)
    if kind == "tensormap::generic":
        return _tensormap_fence(q, ops, c)
    if root in ("async", "tensormap") and kind != "async":
        q.fail(f"async-proxy fence `{q.mnemonic}`",
               "this proxy fence is not modelled yet; modelled: " + form
               + " | " + _UNI_FORMS + " | " + _TM_FENCES, unsupported=True)
    if kind == "async":
        q.take()
        space = q.take_if({"global", "shared::cta", "shared::cluster"})
        q.done(form)
        _operands(ops, "", q, form)
        return ProxyFence(kind=kind, space=SPACES[space] if space else None, **c)
    if kind not in PROXY_FENCE_KINDS:
        close = difflib.get_close_matches(kind, PROXY_FENCE_KINDS, n=1)
        q.fail(f"unknown proxy kind .{kind} in `{q.mnemonic}`",
               (f"did you mean .{close[0]}? " if close else "") + f"expected form: {form}")
    q.take()
    q.done(form)
    _operands(ops, "", q, form)
    return ProxyFence(kind=kind, **c)


_UNI_FORMS = ("fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster | "
              "fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster")


def _uni_async_fence(q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """The uni-directional generic→async proxy fences with their release/acquire half (PTX ISA,
    membar/fence; ptxas accepts exactly these two forms: .release with
    .sync_restrict::shared::cta, .acquire with .sync_restrict::shared::cluster, scope .cluster)."""
    q.take()
    sem = q.take_if({"release", "acquire"})
    want = {"release": "shared::cta", "acquire": "shared::cluster"}
    if sem is None:
        q.fail(f"`{q.mnemonic}` needs .release or .acquire", f"the forms: {_UNI_FORMS}")
    if q.take_if({f"sync_restrict::{want[sem]}"}) is None:  # located at what stands there
        q.fail(f"`{q.mnemonic}` needs .sync_restrict::{want[sem]}", f"the forms: {_UNI_FORMS}")
    if q.take_if({"cluster"}) is None:
        q.fail(f"`{q.mnemonic}` needs the scope .cluster", f"the forms: {_UNI_FORMS}")
    q.done(_UNI_FORMS)
    _operands(ops, "", q, _UNI_FORMS)
    return ProxyFence(kind="async", space="shared", sem=sem, restrict=want[sem], **c)


_TM_FENCES = ("fence.proxy.tensormap::generic.release.scope | "
              "fence.proxy.tensormap::generic.acquire.scope [addr], 128")


def _tensormap_fence(q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``fence.proxy.tensormap::generic.release.scope`` and ``.acquire.scope [addr], 128`` (PTX
    ISA, membar/fence): uni-directional generic → tensormap proxy fences; "The only supported
    value for the size operand is 128, which must be a constant integer literal"."""
    q.take()
    sem = q.take_if({"release", "acquire"})
    if sem is None:
        q.fail(f"`{q.mnemonic}` needs .release or .acquire", f"the forms: {_TM_FENCES}")
    scope = q.take_if(SCOPES)
    if scope is None:
        q.fail(f"`{q.mnemonic}` needs a scope (.cta .cluster .gpu .sys)", f"the forms: {_TM_FENCES}")
    q.done(_TM_FENCES)
    if sem == "release":
        _operands(ops, "", q, _TM_FENCES)
        return ProxyFence(kind="tensormap", sem=sem, scope=scope, **c)
    a, n = _operands(ops, "mv", q, _TM_FENCES)
    if not isinstance(n, Imm) or n.value != 128:
        raise ParseError("the size of fence.proxy.tensormap::generic.acquire is the constant 128",
                         q.pos, "PTX ISA: \"The only supported value for the size operand is 128\"")
    return ProxyFence(kind="tensormap", sem=sem, scope=scope, addr=a, **c)


def _fence(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "fence{.sc|.acq_rel|.acquire|.release}.scope  or  fence.proxy.kind"
    if q.take_if({"proxy"}):
        return _proxy_fence(base, q, ops, c)
    if q.take_if({"mbarrier_init"}):
        return _mbarrier_init_fence(q, ops, c)
    sem = q.take_if({"sc", "acq_rel", "acquire", "release"}) or "acq_rel"
    if (q.peek() or "").split("::")[0] in ("op_restrict", "mbarrier_init", "sync_restrict"):
        q.fail(f"restricted fence .{q.peek()}", "only unrestricted fences are modelled",
               unsupported=True)
    scope = q.take_if(SCOPES)
    if scope is None:
        q.fail("fence needs a scope", "add one of .cta .cluster .gpu .sys", typo=True)
    q.done(form)
    _operands(ops, "", q, form)
    return Fence(sem=sem, scope=scope, **c)


def _mbarrier_init_fence(q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``fence.mbarrier_init.release.cluster`` (the only form the ISA has)."""
    form = "fence.mbarrier_init.release.cluster"
    if q.take_if({"release"}) is None or q.take_if({"cluster"}) is None:
        q.fail(f"`{q.mnemonic}`", f"the one form is {form}")
    q.done(form)
    _operands(ops, "", q, form)
    return Fence(sem="release", scope="cluster", restrict="mbarrier_init", **c)


def _membar(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "membar.cta | membar.gl | membar.sys | membar.proxy.alias"
    if q.take_if({"proxy"}):
        return _proxy_fence(base, q, ops, c)
    lvl = q.take_if({"cta", "gl", "sys"})
    if lvl is None:
        q.fail("membar needs a level", f"expected form: {form}", typo=True)
    q.done(form)
    _operands(ops, "", q, form)
    return Fence(sem="sc", scope={"cta": "cta", "gl": "gpu", "sys": "sys"}[lvl], **c)


# ----- texture and surface instructions (litmus-sized: one element per location) -------------------


def _geom(q: _Quals, form: str) -> None:
    g = q.take_if({"1d"})
    if g is None and q.peek() in GEOMS:
        q.fail(f"{q.peek()} geometry in `{q.mnemonic}`",
               "a litmus location is one word: use the .1d form at coordinate 0", unsupported=True)
    if g is None:
        q.fail(f"`{q.mnemonic.split('.')[0]}` needs a geometry", f"expected form: {form}")


def _clamp(q: _Quals, form: str) -> None:
    if q.take_if(CLAMP) is None:
        q.fail(f"`{q.mnemonic.split('.')[0]}` needs a clamp mode .trap, .clamp or .zero"
               + (f" (got .{q.peek()})" if q.peek() else ""), f"expected form: {form}")


def _handle(h: Handle, q: _Quals, form: str) -> Addr:
    """The reference operand of tex/suld/sust/sured: a name and one coordinate, which must be 0
    (an immediate here; ptx.py checks that a register coordinate always holds 0)."""
    if not isinstance(h.addr.base, Sym):
        raise UnsupportedError(f"`{q.mnemonic}` through a register handle", q.pos,
                               "name the texture/surface reference declared with `aliases`")
    if len(h.coords) != 1:
        raise ParseError(f"a .1d access takes one coordinate, got {len(h.coords)}", q.pos,
                         f"expected form: {form}")
    (x,) = h.coords
    if not isinstance(x, (Reg, Imm)) or x == SINK:
        raise ParseError("the coordinate must be a register or an integer", q.pos,
                         f"expected form: {form}")
    if isinstance(x, Imm) and x.value != 0:
        raise UnsupportedError(f"coordinate {x.value} in `{q.mnemonic}`", q.pos,
                               "a litmus location is one element: access coordinate 0, and "
                               "declare a separate location for each word")
    return h.addr


def _tex(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``tex{.base}.1d.v4.{s32,u32}.s32 {d0, d1, d2, d3}, [t, {x}]``: one weak read through the
    texture proxy into d0; d1..d3 (``_`` or registers) get values the test may not read."""
    form = "tex{.base}.1d.v4.dtype.s32 {d, _, _, _}, [t, {x}]   (.dtype = .s32 | .u32)"
    if q.peek() in ("level", "grad"):
        q.fail(f"mipmap tex.{q.peek()}", f"expected form: {form}", unsupported=True)
    q.take_if({"base"})
    _geom(q, form)
    if q.take_if({"v4"}) is None:
        q.fail(f"`{base}` returns a .v4 vector" + (f" (got .{q.peek()})" if q.peek() else ""),
               f"expected form: {form}")
    ty = q.take_if({"s32", "u32"})
    if ty is None and q.peek() in ("f32", "f16", "f16x2"):
        q.fail(f"texture data type .{q.peek()}", "read integer words: .s32 or .u32",
               unsupported=True)
    if ty is None:
        q.fail(f"missing or unknown texture data type in `{q.mnemonic}`", f"expected form: {form}")
    if q.take_if({"s32"}) is None:
        if q.peek() == "f32":
            q.fail("floating-point texture coordinates (.f32)",
                   "use integer coordinates: .s32", unsupported=True)
        q.fail("tex coordinates are .s32" + (f" (got .{q.peek()})" if q.peek() else ""),
               f"expected form: {form}")
    q.done(form)
    v, h = _operands(ops, "Vh", q, form)
    if len(v.items) != 4 or not all(isinstance(r, Reg) or r == SINK for r in v.items):
        raise ParseError("tex writes a vector of four registers (`_` for unused ones)", q.pos,
                         f"expected form: {form}")
    d, *rest = v.items
    if d == SINK:
        raise ParseError("the first destination of tex receives the value: name a register",
                         q.pos, f"expected form: {form}")
    if d in rest:
        raise UnsupportedError(f"{d.name} is both the first and another destination of tex",
                               q.pos, "write `_` for the channels you do not read")
    return Load(sem="weak", scope=None, space=None, proxy="texture", type=ty, dst=d,
                addr=_handle(h, q, form), **c)


def _tld4(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    raise UnsupportedError(
        "tld4 (texture gather)", q.pos,
        "tld4 reads a 2x2 footprint at .f32 coordinates, whose texels beyond the one a litmus "
        "location has depend on the addressing mode; read one texel with "
        "tex.1d.v4.s32.s32 {%r0, _, _, _}, [t, {0}];")


def _su_b(q: _Quals, form: str) -> None:
    """The ``.b`` (unformatted, byte-addressed) qualifier of suld/sust/sured."""
    if q.peek() == "p":
        q.fail(f"formatted surface access `{q.mnemonic}`", f"use the .b form: {form}",
               unsupported=True)
    if q.take_if({"b"}) is None:
        q.fail(f"`{q.mnemonic.split('.')[0]}` needs .b", f"expected form: {form}")


def _su_type(q: _Quals, form: str) -> str:
    """.b32/.b64 (optionally after a .v2/.v4 the litmus form rejects)."""
    if q.peek() in ("v2", "v4"):
        q.fail(f"vector surface access .{q.peek()}", "write one .b32/.b64 access per word",
               unsupported=True)
    ty = q.take_if({"b32", "b64"})
    if ty is None and q.peek() in ("b8", "b16"):
        q.fail(f"sub-word surface access .{q.peek()}", "access whole words: .b32 or .b64",
               unsupported=True)
    if ty is None:
        q.fail(f"missing or unknown data type in `{q.mnemonic}`"
               + (f" (got .{q.peek()})" if q.peek() else ""), f"expected form: {form}")
    return ty


def _su_access(q: _Quals, form: str, cops: set[str]) -> str:
    """The qualifiers of suld/sust — ``.b.1d{.cop}.{b32,b64}.clamp`` — and the data type."""
    _su_b(q, form)
    _geom(q, form)
    q.take_if(cops)
    ty = _su_type(q, form)
    _clamp(q, form)
    q.done(form)
    return ty


def _suld(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``suld.b.1d{.cop}.{b32,b64}.clamp {d}, [s, {x}]``: a weak read through the surface proxy."""
    form = "suld.b.1d{.ca|.cg|.cs|.cv}.b32|.b64.trap|.clamp|.zero {d}, [s, {x}]"
    ty = _su_access(q, form, SULD_COPS)
    d, h = _operands(ops, "dh", q, form)
    return Load(sem="weak", scope=None, space=None, proxy="surface", type=ty, dst=d,
                addr=_handle(h, q, form), **c)


def _sust(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``sust.b.1d{.cop}.{b32,b64}.clamp [s, {x}], {v}``: a weak write through the surface proxy."""
    form = "sust.b.1d{.wb|.cg|.cs|.wt}.b32|.b64.trap|.clamp|.zero [s, {x}], {v}"
    ty = _su_access(q, form, SUST_COPS)
    h, v = _operands(ops, "hs", q, form)
    return Store(sem="weak", scope=None, space=None, proxy="surface", type=ty, src=v,
                 addr=_handle(h, q, form), **c)


def _sured(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``sured.b.op.1d.ctype.clamp [s, {x}], v``: a reduction through the surface proxy. The ISA
    gives sured no semantics or scope; it is modelled as red's default, relaxed at .gpu."""
    form = "sured.b.op.1d.ctype.trap|.clamp|.zero [s, {x}], v"
    _su_b(q, form)
    op = q.take_if(SURED_TYPES)
    if op is None:
        q.fail("missing or unknown sured operation" + (f" .{q.peek()}" if q.peek() else ""),
               f"operations: {', '.join(SURED_TYPES)}")
    _geom(q, form)
    ty = q.take_if(SURED_TYPES[op])
    if ty is None:
        q.fail(f"sured.{op} takes " + ", ".join("." + t for t in sorted(SURED_TYPES[op]))
               + (f" (got .{q.peek()})" if q.peek() else ""), f"expected form: {form}")
    _clamp(q, form)
    q.done(form)
    h, v = _operands(ops, "hv", q, form)  # ptxas: no vector operand in sured
    return Red(op=op, sem="relaxed", scope="gpu", space=None, proxy="surface", type=ty, src=v,
               addr=_handle(h, q, form), **c)


def _bar(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = f"{base}{{.cta}}.sync a{{, b}} | {base}{{.cta}}.arrive a, b"
    if base == "barrier" and q.take_if({"cluster"}):
        return _cluster_bar(q, ops, c)
    if q.peek() in ("warp", "cluster"):
        q.fail(f"{base}.{q.peek()} barriers", "CTA barriers and barrier.cluster are supported",
               unsupported=True)
    q.take_if({"cta"})
    kind = q.take_if({"sync", "arrive", "red"})
    if kind is None:
        q.fail(f"{base} needs .sync or .arrive", f"expected form: {form}", typo=True)
    if kind == "red":
        q.fail("bar.red", "use bar.sync", unsupported=True)
    if base == "bar" and q.peek() == "aligned":  # ptxas: "Illegal modifier '.aligned' for ... 'bar'"
        q.fail(f"`{q.mnemonic}`: bar takes no .aligned", "bar.sync already is barrier.sync.aligned: "
               "drop .aligned, or write barrier.sync.aligned")
    q.take_if({"aligned"})
    q.done(form)
    if len(ops) > 2 and isinstance(ops[-1], (Imm, Reg)):
        ops = ops[:2]  # Dat3M spelling `bar.cta.sync id, count, nthreads`: count is ops[1]
    ident, *count = _operands(ops, "vv" if kind == "arrive" else "vv?", q, form)
    return Barrier(kind=kind, ids=(ident,), count=count[0] if count else None, **c)


def _cluster_bar(q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``barrier.cluster.arrive{.release|.relaxed}{.aligned}`` and ``barrier.cluster.wait
    {.acquire}{.aligned}`` (PTX ISA 8.0 semantics; default: release arrive, acquire wait)."""
    form = "barrier.cluster.arrive{.release|.relaxed}{.aligned} | barrier.cluster.wait{.acquire}{.aligned}"
    kind = q.take_if({"arrive", "wait"})
    if kind is None:
        q.fail("barrier.cluster needs .arrive or .wait", f"expected form: {form}")
    sem = q.take_if({"release", "relaxed"} if kind == "arrive" else {"acquire"})
    aligned = q.take_if({"aligned"}) is not None
    q.done(form)
    _operands(ops, "", q, form)
    return ClusterBarrier(kind=kind, sem=sem or ("release" if kind == "arrive" else "acquire"),
                          aligned=aligned, **c)


# ----- mbarrier, mapa, cp.async.bulk (docs/hopper.md) --------------------------------------------

MBAR_OPS = {"init", "inval", "arrive", "arrive_drop", "expect_tx", "complete_tx", "test_wait",
            "try_wait"}
_MBAR_FORMS = {
    "init": "mbarrier.init{.shared{::cta}}.b64 [a], count",
    "inval": "mbarrier.inval{.shared{::cta}}.b64 [a]",
    "arrive": "mbarrier.arrive{.expect_tx}{.release|.relaxed}{.cta|.cluster}{.shared{::cta}|"
              ".shared::cluster}.b64 state, [a]{, count}  (.expect_tx: state, [a], txCount)",
    "expect_tx": "mbarrier.expect_tx{.relaxed}{.cta|.cluster}{.shared{::cta}|.shared::cluster}.b64 "
                 "[a], txCount",
    "test_wait": "mbarrier.test_wait{.parity}{.acquire|.relaxed}{.cta|.cluster}{.shared{::cta}}.b64 "
                 "p, [a], state  (.parity: p, [a], phaseParity)",
}
_MBAR_FORMS["arrive_drop"] = _MBAR_FORMS["arrive"].replace("arrive", "arrive_drop", 1)
_MBAR_FORMS["complete_tx"] = _MBAR_FORMS["expect_tx"].replace("expect_tx", "complete_tx", 1)
_MBAR_FORMS["try_wait"] = _MBAR_FORMS["test_wait"].replace("test_wait", "try_wait", 1)


def _mbar_tail(q: _Quals, form: str, sems: set[str], default: str, cluster_space: bool) -> dict:
    """``{.sem.scope}{.space}.b64`` of an mbarrier instruction: the semantics and the scope are
    written together or not at all (ptxas: "Modifier '.release' requires scope", "Modifier
    '.cluster' requires order"); without them, ``default`` at .cta."""
    sem = q.take_if(sems)
    if sem is not None and q.peek() not in ("cta", "cluster"):
        q.fail(f"`.{sem}` of `{q.mnemonic}` without a scope: the semantics and the scope go together",
               f"write .{sem}.cta or .{sem}.cluster (or neither: {default} at .cta)")
    if sem is None and q.peek() in ("cta", "cluster"):
        q.fail(f"the scope `.{q.peek()}` of `{q.mnemonic}` without semantics: the semantics and the "
               "scope go together", f"write .{default}.{q.peek()} (or neither: {default} at .cta)")
    sem = sem or default
    scope = q.take_if({"cta", "cluster"}) or "cta"
    space = q.take_if({"shared", "shared::cta"} | ({"shared::cluster"} if cluster_space else set()))
    if q.peek() in ("global", "local"):
        q.fail(f"an mbarrier object lives in shared memory, not .{q.peek()}", f"expected form: {form}")
    if q.take_if({"b64"}) is None:
        q.fail("mbarrier operations end in .b64" + (f" (got .{q.peek()})" if q.peek() else ""),
               f"expected form: {form}")
    q.done(form)
    return dict(sem=sem, scope=scope, space="shared" if space is None else SPACES[space])


def _mbarrier(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    op = q.take_if(MBAR_OPS)
    if op is None:
        if q.peek() in ("pending_count", "arrive.noComplete"):
            q.fail(f"mbarrier.{q.peek()}", "not modelled yet (docs/hopper.md)", unsupported=True)
        q.fail("unknown mbarrier operation" + (f" .{q.peek()}" if q.peek() else ""),
               "operations: " + ", ".join(sorted(MBAR_OPS)), typo=True)
    form = _MBAR_FORMS[op]
    if op in ("init", "inval"):
        q.take_if({"shared", "shared::cta"})
        if q.take_if({"b64"}) is None:
            q.fail(f"mbarrier.{op} ends in .b64", f"expected form: {form}")
        q.done(form)
        a, *n = _operands(ops, "mv" if op == "init" else "m", q, form)
        return MBarrier(op=op, addr=a, count=n[0] if n else None, sem="weak", scope="cta", **c)
    if op in ("arrive", "arrive_drop"):
        return _mbar_arrive(op, q, ops, c, form)
    if op in ("expect_tx", "complete_tx"):
        f = _mbar_tail(q, form, {"relaxed"}, "relaxed", True)
        a, n = _operands(ops, "mv", q, form)
        return MBarrier(op=op, addr=a, tx=n, **f, **c)
    parity = q.take_if({"parity"}) is not None
    f = _mbar_tail(q, form, {"acquire", "relaxed"}, "acquire", False)
    if len(ops) == 4:
        raise UnsupportedError(f"the suspend-time hint of `{q.mnemonic}`", q.pos,
                               "drop it: the model does not time waits")
    p, a, st = _operands(ops, "rmv", q, form)
    return MBarrier(op=op, addr=a, dst=p, state=st, parity=parity, **f, **c)


def _mbar_arrive(op: str, q: _Quals, ops: list[Operand], c: dict, form: str) -> Instruction:
    if q.peek() == "noComplete":
        q.fail("mbarrier.arrive.noComplete", "not modelled yet (docs/hopper.md)", unsupported=True)
    tx = q.take_if({"expect_tx"}) is not None
    f = _mbar_tail(q, form, {"release", "relaxed"}, "release", True)
    st, a, *rest = _operands(ops, "vmv?", q, form)
    if not (isinstance(st, Reg) or st == SINK):
        raise ParseError(f"the state operand of `{q.mnemonic}` is a register or `_`", q.pos,
                         f"expected form: {form}")
    if tx and not rest:
        raise ParseError(f"`{q.mnemonic}` needs the transaction count", q.pos, f"expected form: {form}")
    if f["space"] == "shared" and "shared::cluster" in q.mnemonic and st != SINK:
        raise ParseError("an arrive on a .shared::cluster mbarrier returns no state", q.pos,
                         "write `_` for the state")
    return MBarrier(op=op, addr=a, dst=st if isinstance(st, Reg) else None,
                    count=None if tx or not rest else rest[0], tx=rest[0] if tx else None, **f, **c)


def _mapa(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "mapa{.shared::cluster}.u32|.u64 d, a, rank"
    q.take_if({"shared::cluster"})
    ty = q.take_if({"u32", "u64"})
    if ty is None:
        q.fail("mapa needs .u32 or .u64", f"expected form: {form}")
    q.done(form)
    d, a, r = _operands(ops, "rvv", q, form)
    if isinstance(a, Imm):
        raise ParseError("mapa maps an address: name a .shared location or a register holding one",
                         q.pos, f"expected form: {form}")
    return Mapa(dst=d, src=a, rank=r, type=ty, **c)


def _cp(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``cp.reduce.async.bulk`` or the copies."""
    return _cp_reduce(q, ops, c) if q.peek() == "reduce" else _cp_copy(base, q, ops, c)


def _cp_copy(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``cp.async.bulk`` (one word), ``cp.async.bulk.commit_group``, ``cp.async.bulk.wait_group``."""
    g2s = ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes{.multicast::cluster} "
           "[dst], [src], size, [mbar]{, ctaMask}")
    s2g = "cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size"
    form = f"{g2s} | {s2g} | cp.async.bulk.commit_group | cp.async.bulk.wait_group{{.read}} N"
    if q.take_if({"async"}) is None:
        q.fail(f"`{q.mnemonic}`", "of the copies, the one-word cp.async and cp.async.bulk forms "
               "are modelled: " + form, unsupported=True)
    if q.peek() != "bulk":
        return _cp_async(q, ops, c)
    q.take()
    if q.take_if({"tensor"}):
        return _cp_tensor(q, ops, c)
    if q.peek() == "prefetch":
        q.fail(f"cp.async.bulk.{q.peek()}", f"modelled: {form}", unsupported=True)
    if q.take_if({"commit_group"}):
        q.done(form)
        _operands(ops, "", q, form)
        return BulkGroup(kind="commit", **c)
    if q.take_if({"wait_group"}):
        read = q.take_if({"read"}) is not None
        q.done(form)
        (n,) = _operands(ops, "v", q, form)
        return BulkGroup(kind="wait", n=_group_count(n, q, form), read=read, **c)
    dst = q.take_if({"shared::cluster", "shared::cta", "global"})
    src = q.take_if({"global", "shared::cta"})
    if (dst, src) not in (("shared::cluster", "global"), ("shared::cta", "global"),
                          ("global", "shared::cta")):
        q.fail(f"cp.async.bulk from {src or '?'} to {dst or '?'}", f"modelled: {form}",
               unsupported=True)
    want = "bulk_group" if dst == "global" else "mbarrier::complete_tx::bytes"
    if q.take_if({want}) is None:
        q.fail(f"`{q.mnemonic}` needs the completion mechanism .{want}", f"expected form: {form}")
    multi = dst == "shared::cluster" and q.take_if({"multicast::cluster"}) is not None
    if q.peek() is not None:
        q.fail(f"qualifier .{q.peek()} of cp.async.bulk", f"modelled: {form}", unsupported=True)
    kinds = "mmv" if dst == "global" else ("mmvmv" if multi else "mmvm")
    d, s_, n, *rest = _operands(ops, kinds, q, form)
    _bulk_size(n, q, "copy")
    if multi and not isinstance(rest[1], Imm):
        raise UnsupportedError("a ctaMask held in a register", q.pos,
                               "write the mask as a constant, e.g. 3 for CTA ranks 0 and 1")
    return BulkCopy(dst=d, src=s_, size=n, mbar=rest[0] if rest else None,
                    dst_space=SPACES[dst], src_space=SPACES[src],
                    multicast=rest[1] if multi else None, **c)


def _group_count(n: Operand, q: _Quals, form: str) -> int:
    """The N of ``wait_group N``: a constant count of the groups left pending, 0 .. 2^32 - 1 (a
    32-bit operand; ptxas rejects a negative one in wgmma.wait_group and would truncate 2^32 to
    0). A negative count has no meaning the ISA gives, and is not given one here."""
    if not isinstance(n, Imm):
        raise ParseError(f"`{q.mnemonic}` takes an integer constant", q.pos, f"expected form: {form}")
    if not 0 <= n.value < 1 << 32:
        raise ParseError(f"group count {n.value} of `{q.mnemonic}`", q.pos,
                         "N is how many of the most recent groups may stay pending: 0 .. 4294967295 "
                         "(0 waits for all of them)")
    return n.value


def _bulk_size(n: Operand, q: _Quals, what: str) -> None:
    """A bulk copy's size: a constant number of bytes, a multiple of 16 (PTX ISA, cp.async.bulk:
    "size ... must be a multiple of 16"), or 4, the litmus extension of a one-word copy; the copy
    moves size/4 consecutive 32-bit words."""
    if not isinstance(n, Imm):
        raise UnsupportedError(f"a bulk {what} whose size is held in a register", q.pos,
                               "write the number of bytes as a constant (4, or a multiple of 16)")
    if n.value != 4 and (n.value <= 0 or n.value % 16):
        raise ParseError(f"a bulk {what} of {n.value} bytes", q.pos,
                         "the size is a multiple of 16 (ptxas), or 4: the litmus one-word copy")


_TENSOR_LOAD = ("cp.async.bulk.tensor.1d|.2d.shared::cluster|.shared::cta.global{.tile}"
                ".mbarrier::complete_tx::bytes{.multicast::cluster} [dst], [tmap, {c0{, c1}}], [mbar]"
                "{, ctaMask}")
_TENSOR_STORE = "cp.async.bulk.tensor.1d|.2d.global.shared::cta{.tile}.bulk_group [tmap, {c0{, c1}}], [src]"


def _cp_tensor(q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``cp.async.bulk.tensor`` in tile mode, 1d and 2d (PTX ISA, cp.async.bulk.tensor); the tensor
    map a litmus ``.tensormap`` location (docs/hopper.md)."""
    form = f"{_TENSOR_LOAD} | {_TENSOR_STORE}"
    dim = q.take_if({"1d", "2d"})
    if dim is None:
        if q.peek() in ("3d", "4d", "5d"):
            q.fail(f"cp.async.bulk.tensor.{q.peek()}", f"modelled: {form}", unsupported=True)
        q.fail(f"`{q.mnemonic}` needs the dimension .1d or .2d", f"expected form: {form}")
    dst = q.take_if({"shared::cluster", "shared::cta", "global"})
    src = q.take_if({"global", "shared::cta"})
    if (dst, src) not in (("shared::cluster", "global"), ("shared::cta", "global"),
                          ("global", "shared::cta")):
        q.fail(f"cp.async.bulk.tensor from {src or '?'} to {dst or '?'}", f"modelled: {form}",
               unsupported=True)
    if q.peek() in ("im2col", "tile::gather4", "tile::scatter4", "im2col::w", "im2col::w::128",
                    "im2col_no_offs"):
        q.fail(f"load mode .{q.peek()}", f"modelled: the tile mode; {form}", unsupported=True)
    q.take_if({"tile"})
    load = dst != "global"
    want = "mbarrier::complete_tx::bytes" if load else "bulk_group"
    if q.take_if({want}) is None:
        q.fail(f"`{q.mnemonic}` needs the completion mechanism .{want}", f"expected form: {form}")
    multi = dst == "shared::cluster" and q.take_if({"multicast::cluster"}) is not None
    if q.peek() is not None:
        q.fail(f"qualifier .{q.peek()} of cp.async.bulk.tensor", f"modelled: {form}", unsupported=True)
    kinds = ("mhmv" if multi else "mhm") if load else "hm"
    got = _operands(ops, kinds, q, form)
    h = got[1] if load else got[0]
    n = int(dim[0])
    if len(h.coords) != n or not all(isinstance(x, (Reg, Imm)) and x != SINK for x in h.coords):
        raise ParseError(f"a .{dim} tensor copy takes {n} coordinate(s) (registers or integers), got "
                         f"{len(h.coords)}", q.pos, f"expected form: {form}")
    if multi and not isinstance(got[3], Imm):
        raise UnsupportedError("a ctaMask held in a register", q.pos,
                               "write the mask as a constant, e.g. 3 for CTA ranks 0 and 1")
    return TensorCopy(dims=n, smem=got[0] if load else got[1], tmap=h.addr, coords=tuple(h.coords),
                      load=load, mbar=got[2] if load else None, multicast=got[3] if multi else None,
                      dst_space="shared" if load else "global", **c)


def _tensormap(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``tensormap.replace.tile.global_address{.global}.b1024.b64 [tmap], new_val`` (PTX ISA,
    tensormap.replace; the other fields, the .shared::cta copy and tensormap.cp_fenceproxy are
    not modelled: a litmus tensor map fixes dims and box)."""
    form = "tensormap.replace.tile.global_address{.global}.b1024.b64 [tmap], new_val"
    if q.take_if({"replace"}) is None:
        q.fail(f"`{q.mnemonic}`", f"modelled: {form}", unsupported=True)
    if q.take_if({"tile"}) is None:
        q.fail(f"`{q.mnemonic}` needs the mode .tile", f"expected form: {form}")
    field_ = q.take_if({"global_address"})
    if field_ is None:
        q.fail(f"tensormap.replace of the field .{q.peek()}" if q.peek() else f"`{q.mnemonic}`",
               f"a litmus tensor map fixes its dims and box; modelled: {form}", unsupported=True)
    if q.peek() == "shared::cta":
        q.fail("tensormap.replace of a tensor map in shared memory", f"modelled: {form}",
               unsupported=True)
    q.take_if({"global"})
    if q.take_if({"b1024"}) is None or q.take_if({"b64"}) is None:
        q.fail(f"`{q.mnemonic}` ends in .b1024.b64 (the .global_address field is 64 bits)",
               f"expected form: {form}")
    q.done(form)
    a, v = _operands(ops, "mv", q, form)
    return TensorMapReplace(addr=a, src=v, **c)


_REDUCE_TYPES = {"add": {"u32", "s32"}, "min": {"u32", "s32"}, "max": {"u32", "s32"},
                 "inc": {"u32"}, "dec": {"u32"}, "and": {"b32"}, "or": {"b32"}, "xor": {"b32"}}


def _cp_reduce(q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``cp.reduce.async.bulk.global.shared::cta.bulk_group.op.type [dst], [src], 4`` (PTX ISA,
    cp.reduce.async.bulk; one 32-bit word, the types ptxas takes for each operation)."""
    form = ("cp.reduce.async.bulk.global.shared::cta.bulk_group.op.type [dst], [src], 4  "
            "(.add|.min|.max .u32|.s32, .inc|.dec .u32, .and|.or|.xor .b32)")
    q.take()
    if q.take_if({"async"}) is None or q.take_if({"bulk"}) is None:
        q.fail(f"`{q.mnemonic}`", f"expected form: {form}")
    if q.peek() == "tensor":
        q.fail("cp.reduce.async.bulk.tensor", f"modelled: {form}", unsupported=True)
    dst, src = q.take_if({"global", "shared::cluster"}), q.take_if({"shared::cta"})
    if (dst, src) != ("global", "shared::cta"):
        q.fail(f"cp.reduce.async.bulk from {src or '?'} to {dst or '?'}", f"modelled: {form}",
               unsupported=True)
    if q.take_if({"bulk_group"}) is None:
        q.fail(f"`{q.mnemonic}` needs the completion mechanism .bulk_group", f"expected form: {form}")
    op = q.take_if(set(_REDUCE_TYPES))
    if op is None:
        q.fail("cp.reduce.async.bulk needs a reduction", f"expected form: {form}", typo=True)
    ty = q.take_if(_REDUCE_TYPES[op])
    if ty is None:
        q.fail(f"cp.reduce.async.bulk .{op} takes " + " ".join(f".{t}" for t in sorted(_REDUCE_TYPES[op]))
               + (f" (got .{q.peek()})" if q.peek() else ""), f"expected form: {form}")
    if q.peek() is not None:
        q.fail(f"qualifier .{q.peek()} of cp.reduce.async.bulk", f"modelled: {form}", unsupported=True)
    d, s_, n = _operands(ops, "mmv", q, form)
    _bulk_size(n, q, "reduction")
    return BulkCopy(dst=d, src=s_, size=n, dst_space="global", src_space="shared", op=op, type=ty,
                    **c)


def _cp_async(q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """Ampere ``cp.async.ca.shared{::cta}.global [d], [s], 4``, ``cp.async.commit_group``,
    ``cp.async.wait_group N``, ``cp.async.wait_all``, ``cp.async.mbarrier.arrive{.noinc}
    {.shared{::cta}}.b64 [mbar]`` (PTX ISA, cp.async; docs/hopper.md)."""
    form = ("cp.async.ca.shared{::cta}.global [dst], [src], 4 | cp.async.commit_group | "
            "cp.async.wait_group N | cp.async.wait_all | cp.async.mbarrier.arrive{.noinc}"
            "{.shared{::cta}}.b64 [mbar]")
    kind = q.take_if({"commit_group", "wait_group", "wait_all", "mbarrier", "ca", "cg"})
    if kind is None:
        q.fail(f"`{q.mnemonic}`", f"modelled: {form}", unsupported=True)
    if kind == "mbarrier":
        if q.take_if({"arrive"}) is None:
            q.fail(f"`{q.mnemonic}`", f"expected form: {form}")
        noinc = q.take_if({"noinc"}) is not None
        q.take_if({"shared", "shared::cta"})
        if q.take_if({"b64"}) is None:
            q.fail("cp.async.mbarrier.arrive ends in .b64", f"expected form: {form}")
        q.done(form)
        (a,) = _operands(ops, "m", q, form)
        return CpAsyncGroup(kind="arrive", mbar=a, noinc=noinc, **c)
    if kind in ("commit_group", "wait_all"):
        q.done(form)
        _operands(ops, "", q, form)
        return CpAsyncGroup(kind={"commit_group": "commit"}.get(kind, kind), **c)
    if kind == "wait_group":
        q.done(form)
        (n,) = _operands(ops, "v", q, form)
        return CpAsyncGroup(kind="wait", n=_group_count(n, q, form), **c)
    if kind == "cg":
        q.fail("cp.async.cg (16-byte copies)", "a litmus location is one word: cp.async.ca of 4 "
               "bytes", unsupported=True)
    if q.take_if({"shared", "shared::cta"}) is None or q.take_if({"global"}) is None:
        q.fail(f"`{q.mnemonic}` copies global to shared", f"expected form: {form}")
    if q.peek() is not None:
        q.fail(f"qualifier .{q.peek()} of cp.async", f"modelled: {form}", unsupported=True)
    d, s_, n = _operands(ops, "mmv", q, form)
    if not isinstance(n, Imm) or n.value != 4:
        raise UnsupportedError("a cp.async of other than 4 bytes", q.pos,
                               "a litmus location is one 32-bit word: copy 4 bytes")
    return CpAsync(dst=d, src=s_, size=n, **c)


_WGMMA_FORM = ("wgmma.fence.sync.aligned | wgmma.commit_group.sync.aligned | "
               "wgmma.wait_group.sync.aligned N | wgmma.mma_async.sync.aligned.m64nNk32.s32"
               ".s8|.u8.s8|.u8{.satfinite} {d0, ..., d(N/2-1)}, a-desc, b-desc, scale-d")


def _wgmma(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    """``wgmma.fence`` / ``commit_group`` / ``wait_group`` and the integer ``wgmma.mma_async``
    with both matrices in shared memory (PTX ISA, wgmma; docs/hopper.md), in ptxas's operand
    rules: ``.sync.aligned`` required, 64-bit descriptor registers, scale-d 0, 1 or a predicate,
    N/2 accumulator registers for shape m64nNk32."""
    form = _WGMMA_FORM
    kind = q.take_if({"fence", "commit_group", "wait_group", "mma_async"})
    if kind is None:
        q.fail(f"`{q.mnemonic}`" + (" (wgmma.mma_async.sp is not modelled)" if q.peek() == "mma_async"
                                    else ""), f"modelled: {form}", unsupported=q.peek() is not None)
    if q.take_if({"sync"}) is None or q.take_if({"aligned"}) is None:
        q.fail(f"`{q.mnemonic}` needs .sync.aligned", f"expected form: {form}")
    if kind != "mma_async":
        q.done(form)
        if kind == "wait_group":
            (n,) = _operands(ops, "v", q, form)
            return Wgmma(kind="wait", n=_group_count(n, q, form), **c)
        _operands(ops, "", q, form)
        return Wgmma(kind={"commit_group": "commit"}.get(kind, kind), **c)
    shape = q.take() if q.peek() is not None else None
    m = re.fullmatch(r"m64n(\d+)k(\d+)", shape or "")
    if m is None or int(m.group(1)) % 8 or not 8 <= int(m.group(1)) <= 256:
        q.fail(f"wgmma shape .{shape}", f"expected form: {form}")
    dtype = q.take_if({"s32", "f32", "f16"})
    if dtype != "s32" or m.group(2) != "32":
        q.fail(f"the floating-point wgmma form .{shape}.{dtype}", "ptxmm models integer values: "
               f"write the integer form {form}", unsupported=True)
    if q.take_if({"s8", "u8"}) is None or q.take_if({"s8", "u8"}) is None:
        q.fail("wgmma.mma_async.s32 needs .s8|.u8 for A and B", f"expected form: {form}")
    q.take_if({"satfinite"})
    q.done(form)
    d, a, b, scale = _operands(ops, "Vvvv", q, form)
    want = int(m.group(1)) // 2
    if len(d.items) != want or not all(isinstance(x, Reg) for x in d.items):
        raise ParseError(f"`{q.mnemonic}` takes {want} accumulator registers, got {len(d.items)}",
                         q.pos, f"shape m64n{m.group(1)}k32: N/2 .s32 registers per thread")
    if not all(isinstance(x, Reg) for x in (a, b)):
        raise ParseError("wgmma matrix descriptors are 64-bit registers", q.pos,
                         "hold the address of a .shared word in one: mov.u64 %rd0, x;")
    if isinstance(scale, Imm) and scale.value not in (0, 1):
        raise ParseError("scale-d is 0, 1 or a predicate", q.pos, "0: D = A*B; 1: D = A*B + D")
    return Wgmma(kind="mma", dst=d.items[0], accs=d.items, a=a, b=b, scale_d=scale, shape=shape, **c)


def _elect(base: str, q: _Quals, ops: list, c: dict) -> Instruction:
    """``elect.sync _|p, membermask`` (PTX ISA, elect.sync): p is True in the one lane of the
    membermask the instruction elects.  The elected lane's id (``d``) is not modelled: a litmus
    thread has no lane id (write ``_``)."""
    form = "elect.sync _|p, membermask"
    if q.take_if({"sync"}) is None:
        q.fail("elect needs .sync", f"expected form: {form}")
    q.done(form)
    dp, mask = _operands(ops, "Vv", q, form)
    if not dp.pair or len(dp.items) != 2 or not isinstance(dp.items[1], Reg):
        raise ParseError("the destination of elect.sync is d|p: a register or `_`, `|`, and a "
                         "predicate register", q.pos, f"expected form: {form}")
    if dp.items[0] != SINK:
        raise UnsupportedError("the elected lane's id (elect.sync's d)", q.pos,
                               "a litmus thread has no lane id: write `_|%p`")
    if not isinstance(mask, Imm):
        raise UnsupportedError("a membermask held in a register", q.pos, "write the mask as a constant")
    return Elect(dst=dp.items[1], mask=mask, **c)


def _mov(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "mov.type d, a"
    ty = _type(q, form)
    q.done(form)
    d, a = _operands(ops, "rv", q, form)
    return Mov(type=ty, dst=d, src=a, **c)


def _alu(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    unary = base in ("not", "neg")
    form = f"{base}.type d, a" + ("" if unary else ", b")
    if base == "mul":
        form = "mul.lo.type d, a, b"
        if q.peek() in ("hi", "wide"):
            q.fail(f"`mul.{q.peek()}`", "the value language has the low half of a product only: "
                   "mul.lo", unsupported=True)
        if q.take_if({"lo"}) is None and q.peek() in TYPES and q.peek()[0] in "usb":
            q.fail(f"`mul.{q.peek()}` needs .lo", f"write mul.lo.{q.peek()} (the low half of "
                   "the product; .hi and .wide are not modelled)")
    if base in ("add", "sub") and q.peek() == "sat":
        q.fail(f"`{base}.sat` (saturating arithmetic)", f"use {base}.s32 (wraps around)",
               unsupported=True)
    ty = _type(q, form)
    q.done(form)
    d, *srcs = _operands(ops, "rv" if unary else "rvv", q, form)
    return Alu(op=base, type=ty, dst=d, srcs=tuple(srcs), **c)


def _setp(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "setp.cmp.type p, a, b"
    cmp = q.take_if(CMP_OPS)
    if cmp is None:
        q.fail("setp needs a comparison", "one of .eq .ne .lt .le .gt .ge (.lo .ls .hi .hs)",
               typo=True)
    ty = _type(q, form)
    q.done(form)
    p, a, b = _operands(ops, "rvv", q, form)
    return Setp(cmp=cmp, type=ty, dst=p, a=a, b=b, **c)


def _selp(base: str, q: _Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "selp.type d, a, b, p"
    ty = _type(q, form)
    q.done(form)
    d, a, b, p = _operands(ops, "rvvv", q, form)  # check.py: a constant selector
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
             "ret": _ret, "exit": _ret, "tex": _tex, "tld4": _tld4, "suld": _suld, "sust": _sust,
             "sured": _sured, "mbarrier": _mbarrier, "mapa": _mapa, "cp": _cp, "wgmma": _wgmma,
             "elect": _elect, "tensormap": _tensormap,
             **{op: _alu for op in ALU_OPS}}


def decode(mnemonic: str, ops: list, pos: SourcePos | None, text: str = "",
           guard: Guard | None = None) -> Instruction:
    """One instruction, typed and with its qualifiers normalised (see program.py). ``ops`` may
    hold the front-end operands Vec and Handle, which only proxy instructions accept."""
    base, q = split_mnemonic(mnemonic, pos)
    handler = _HANDLERS.get(base)
    if handler is None:
        _unknown_opcode(base, pos)
    _check_repeats(base, q)
    return handler(base, q, ops, dict(pos=pos, text=text or mnemonic, guard=guard))


# English words and other assemblers' spellings someone may type for an instruction ptxmm models
_SYNONYMS = {"load": "ld", "store": "st", "atomic": "atom", "reduce": "red", "move": "mov",
             "branch": "bra", "jump": "bra", "jmp": "bra", "return": "ret", "select": "selp",
             "compare": "setp", "cmp": "setp"}


def _unknown_opcode(base: str, pos: SourcePos | None) -> None:
    """A mnemonic with no handler: another tool's spelling and anything that is not PTX are
    syntax errors (with a did-you-mean from the instructions ptxmm models); real PTX that ptxmm
    does not model is "not supported yet"."""
    modelled = "ptxmm models " + " ".join(KNOWN)
    if base in FOREIGN:
        raise ParseError(f"`{base}` is not a PTX instruction", pos, FOREIGN[base])
    if base in PTX_OPCODES:
        raise UnsupportedError(f"PTX instruction `{base}`", pos,
                               f"{modelled}; express the test with those")
    raise ParseError(f"unknown instruction `{base}`", pos,
                     did_you_mean(base.lower(), KNOWN, synonyms=_SYNONYMS)
                     + f"it is not a PTX instruction; {modelled}")


# ----- qualifier categories: each at most once per instruction; the qualifiers each takes -------

_COPS = {"ca", "cg", "cs", "lu", "cv", "wb", "wt"}
_CATEGORY = {
    **{s: "semantics" for s in (*_SEMS, "volatile")},
    **{s: "scope" for s in SCOPES},
    **{s: "state space" for s in (*SPACES, "const", "local", "param")},
    **{t: "type" for t in TYPES},
    **{c: "cache operator" for c in _COPS},
    **{h: "L1 eviction priority" for h in CACHE_HINTS if h.startswith("L1::")},
    **{h: "L2 eviction priority" for h in CACHE_HINTS if h.startswith("L2::evict")},
    **{h: "L2 prefetch size" for h in ("L2::64B", "L2::128B", "L2::256B")},
    "L2::cache_hint": "cache-policy operand",
}
# instructions whose forms name a category twice: tex's data and coordinate types, cp's
# destination and source state spaces
_REPEATED = {"tex": {"type"}, "tld4": {"type"}, "cp": {"state space"}, "wgmma": {"type"},
             "tensormap": {"state space", "type"}}


def _check_repeats(base: str, q: _Quals) -> None:
    """``st.global.cg.wb.u32``, ``ld.relaxed.gpu.sys...``: a second qualifier of one category."""
    seen: dict[str, str] = {}
    allowed = _REPEATED.get(base, set())
    for name, off in q.items:
        cat = _CATEGORY.get(name)
        if cat is None or cat in allowed:
            continue
        if cat in seen:
            raise ParseError(f"a second {cat} `.{name}` in `{q.mnemonic}` (after `.{seen[cat]}`)",
                             q.at(off), f"an instruction takes at most one {cat}: drop one")
        seen[cat] = name


_ASYNC_ST = {"async", "mbarrier::complete_tx::bytes"}
_REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
_MEM_QUALS = ({*_SEMS, "volatile", "mmio", "const", "local", "param", "nc", "v2", "v4", "v8"}
              | SCOPES | set(SPACES) | CACHE_HINTS | TYPES)
_SU_QUALS = ({"b", "p", "v2", "v4", "b8", "b16", "b32", "b64"} | GEOMS | SULD_COPS | SUST_COPS
             | CLAMP | set(SURED_TYPES) | set().union(*SURED_TYPES.values()))
_TEX_QUALS = {"base", "level", "grad", "v4", "s32", "u32", "f32", "f16", "f16x2"} | GEOMS
QUALIFIERS = {
    "ld": _MEM_QUALS, "st": _MEM_QUALS | _ASYNC_ST, "atom": _MEM_QUALS | ATOM_OPS,
    "red": _MEM_QUALS | ATOM_OPS | _ASYNC_ST,
    "fence": ({"sc", "acq_rel", "acquire", "release", "proxy", "op_restrict", "mbarrier_init",
               "sync_restrict", "tensormap", "shared::cta", "shared::cluster", "global",
               "async::generic", "tensormap::generic", "sync_restrict::shared::cta",
               "sync_restrict::shared::cluster"}
              | SCOPES | set(PROXY_FENCE_KINDS)),
    "membar": {"cta", "gl", "sys", "proxy", "alias"},
    "bar": {"cta", "sync", "arrive", "red", "aligned", "warp", "cluster", "wait", "release",
            "relaxed", "acquire"},
    "mov": TYPES, "setp": CMP_OPS | TYPES, "selp": TYPES, "bra": {"uni"}, "ret": set(),
    "tex": _TEX_QUALS, "tld4": _TEX_QUALS, "suld": _SU_QUALS, "sust": _SU_QUALS,
    "sured": _SU_QUALS,
    "mbarrier": MBAR_OPS | {"parity", "expect_tx", "noComplete", "inval", "pending_count",
                            "release", "relaxed", "acquire", "cta", "cluster", "shared",
                            "shared::cta", "shared::cluster", "b64", "global", "local"},
    "mapa": {"shared::cluster", "u32", "u64"},
    "cp": {"async", "bulk", "commit_group", "wait_group", "read", "shared::cluster",
           "shared::cta", "global", "bulk_group", "mbarrier::complete_tx::bytes", "tensor",
           "prefetch", "multicast::cluster", "ca", "cg", "wait_all", "mbarrier", "arrive", "noinc",
           "shared", "b64", "reduce", "u32", "s32", "b32", "1d", "2d", "3d", "4d", "5d", "tile",
           *_REDUCE_OPS},
    "tensormap": {"replace", "tile", "global_address", "global", "shared::cta", "b1024", "b64", "b32",
                  "rank", "box_dim", "global_dim", "global_stride", "element_stride", "elemtype",
                  "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode",
                  "cp_fenceproxy"},
    "elect": {"sync"},
    "wgmma": {"fence", "commit_group", "wait_group", "mma_async", "sync", "aligned", "s32", "s8",
              "u8", "f32", "f16", "satfinite", "sp"},
    **{op: TYPES | {"lo", "hi", "wide", "sat"} for op in ALU_OPS},
}
QUALIFIERS |= {"barrier": QUALIFIERS["bar"], "exit": QUALIFIERS["ret"]}
_ALL_QUALIFIERS = set().union(*QUALIFIERS.values())


def _misspelt(mnemonic: str, qual: str, message: str, hint: str | None) -> tuple[str, str | None]:
    """(message, hint) of a rejection at ``qual``: the handler's own, unless ``qual`` is no
    instruction's qualifier and close to one of this instruction's."""
    if qual in _ALL_QUALIFIERS:
        return message, hint
    guess = did_you_mean(qual, QUALIFIERS.get(mnemonic.split(".")[0], _ALL_QUALIFIERS), ".")
    if not guess:
        return message, hint
    if hint and "did you mean" in hint:  # the handler's own guess
        guess = ""
    return f"unknown qualifier `.{qual}` in `{mnemonic}`", guess + (hint or "")

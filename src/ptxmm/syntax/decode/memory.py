"""Decoders of the memory accesses ``ld``, ``st``, ``atom`` and ``red`` (and ``st.async``/
``red.async``): qualifier order as ptxas accepts it, e.g. ``ld{.weak}{.ss}{.cop}.type``,
``ld.sem.scope{.ss}.type``, ``atom{.sem}{.scope}{.ss}.op.type``, and the cache qualifiers
where ptxas takes them."""

from __future__ import annotations

from ..._infra.records import record
from ...errors import UnsupportedError
from ...ir.program import (
    AsyncStore,
    Atom,
    Instruction,
    Load,
    Operand,
    Red,
    Store,
    Sym,
)
from .operands import operands
from .qualifiers import CACHE_HINTS, SCOPES, SEMS, SPACES, TYPES, Quals, mem_sem, take_space, take_type
from .registry import register

ATOM_OPS = {"add", "inc", "dec", "exch", "cas", "and", "or", "xor", "min", "max"}
RED_OPS = ATOM_OPS - {"exch", "cas"}

def _mmio_space(q: Quals, mmio: bool) -> str | None:
    """The state space of ld/st; an ``.mmio`` access is to .global (or generic) memory."""
    if mmio and q.peek() in SPACES and SPACES[q.peek()] == "shared":
        q.fail(f"an .mmio access to .{q.peek()} memory", "memory-mapped I/O is .global: write "
               "ld.mmio.relaxed.sys.global (or no state space)")
    return take_space(q)

def _skip_cache_hints(q: Quals) -> None:
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


def _cache_hints(q: Quals, acc: _Access) -> None:
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


def _ld(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "ld{.weak|.relaxed.scope|.acquire.scope|.volatile}{.global|.shared}.type d, [a]"
    if "const" in (i[0] for i in q.items):
        return _ld_const(q, ops, c)
    if q.peek() == "global" and len(q.items) > 1 and q.items[1][0] == "nc":
        q.take()
        q.fail("ld.global.nc (non-coherent texture path) is outside the memory model",
               "use ld.global or ld.relaxed.<scope>.global", unsupported=True)
    mmio = q.peek() == "mmio"
    sem, scope, vol = mem_sem(q, {"weak", "relaxed", "acquire"}, form)
    space = _mmio_space(q, mmio)
    _cache_hints(q, _Access(base, sem, vol, mmio, space == "shared"))
    ty = take_type(q, form)
    q.done(form)
    d, a = operands(ops, "rm", q, form)
    return Load(sem=sem, scope=scope, space=space, type=ty, dst=d, addr=a, volatile=vol, **c)


def _ld_const(q: Quals, ops: list[Operand], c: dict) -> Instruction:
    """``ld{.weak}.const{.cop}.type d, [c]``: a weak load through the constant proxy."""
    form = "ld{.weak}.const{.cop}.type d, [c]"
    q.take_if({"weak"})
    if q.peek() != "const":
        q.fail(f"`.{q.peek()}` cannot be applied to the .const state space",
               "a constant-bank load is weak: write ld.const.u32 (or ld.weak.const.u32)")
    q.take()
    _skip_cache_hints(q)
    ty = take_type(q, form)
    q.done(form)
    d, a = operands(ops, "rm", q, form)
    if not isinstance(a.base, Sym):
        raise UnsupportedError("ld.const through a register address", q.pos,
                               "name the constant alias: ld.const.u32 %r0, [c];")
    return Load(sem="weak", scope=None, space=None, proxy="constant", type=ty, dst=d, addr=a, **c)


def _st(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    if q.take_if({"async"}):
        return _async_store(base, q, ops, c)
    form = "st{.weak|.relaxed.scope|.release.scope|.volatile}{.global|.shared}.type [a], b"
    mmio = q.peek() == "mmio"
    sem, scope, vol = mem_sem(q, {"weak", "relaxed", "release"}, form)
    space = _mmio_space(q, mmio)
    _cache_hints(q, _Access(base, sem, vol, mmio, space == "shared"))
    ty = take_type(q, form)
    q.done(form)
    a, v = operands(ops, "mv", q, form)
    return Store(sem=sem, scope=scope, space=space, type=ty, addr=a, src=v, volatile=vol, **c)


def _rmw_quals(base: str, q: Quals, sems: set[str], opset: set[str], form: str) -> dict:
    """Qualifiers of atom/red: ``{.sem}{.scope}{.space}.op.type`` → the instruction's fields."""
    if q.peek() in ("volatile", "mmio"):  # ptxas: "Illegal modifier '.volatile' for instruction 'atom'"
        q.fail(f"`.{q.peek()}` is not a qualifier of {base}",
               f"only ld and st take .volatile and .mmio; write {base}.relaxed.sys for a relaxed "
               "RMW at system scope")
    sem, scope, _ = mem_sem(q, sems, form, rmw=True)
    space = take_space(q)
    op = q.take_if(opset)
    if op is None:
        q.fail(f"missing or unknown {base} operation" + (f" .{q.peek()}" if q.peek() else ""),
               f"operations: {', '.join(sorted(opset))}", typo=True)
    ty = take_type(q, form)
    q.done(form)
    return dict(sem=sem, scope=scope, space=space, op=op, type=ty)


def _atom(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    form = "atom{.sem}{.scope}{.global|.shared}.op.type d, [a], b{, c}"
    f = _rmw_quals(base, q, {"relaxed", "acquire", "release", "acq_rel"}, ATOM_OPS, form)
    d, a, *srcs = operands(ops, "rmvv" if f["op"] == "cas" else "rmv", q, form)
    return Atom(dst=d, addr=a, srcs=tuple(srcs), **f, **c)


def _async_store(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
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
    a, v, m = operands(ops, "mvm", q, form)
    return AsyncStore(addr=a, src=v, mbar=m, type=ty, op=op, **c)


def _red(base: str, q: Quals, ops: list[Operand], c: dict) -> Instruction:
    if q.take_if({"async"}):
        return _async_store(base, q, ops, c)
    form = "red{.sem}{.scope}{.global|.shared}.op.type [a], b"
    f = _rmw_quals(base, q, {"relaxed", "release"}, RED_OPS, form)
    a, v = operands(ops, "mv", q, form)
    return Red(addr=a, src=v, **f, **c)


_ASYNC_ST = {"async", "mbarrier::complete_tx::bytes"}
_MEM_QUALS = ({*SEMS, "volatile", "mmio", "const", "local", "param", "nc", "v2", "v4", "v8"}
              | SCOPES | set(SPACES) | CACHE_HINTS | TYPES)
register(["ld"], _ld, _MEM_QUALS)
register(["st"], _st, _MEM_QUALS | _ASYNC_ST)
register(["atom"], _atom, _MEM_QUALS | ATOM_OPS)
register(["red"], _red, _MEM_QUALS | ATOM_OPS | _ASYNC_ST)

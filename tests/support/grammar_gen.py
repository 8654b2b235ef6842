"""Hypothesis strategies over both front ends' grammars, for fuzzing (tests/syntax/test_fuzz_front_ends.py).

``valid_ptx()`` draws `.ptx` programs (grammar/ptx.lark, src/ptxmm/syntax/instr.py) and
``valid_litmus()`` Dat3M `.litmus` tests (grammar/litmus.lark, src/ptxmm/syntax/litmus.py) that
use every instruction form the front ends accept, and are well formed: every register is written
(on every path) before it is read or named by the condition, keeps one type, and has the width of
the locations it moves; every label is defined once; literals fit their type; proxy accesses go
through aliases of the matching kind. Programs stay small enough for the brute-force engine: at
most ``max_events`` memory events after unrolling (an RMW counts two), ``max_writes`` writes per
physical location, ``max_sc`` SC fences, up to 3 threads.

``mutated(strategy)`` damages programs drawn from ``strategy`` (1 to 4 edits): tokens and lines
deleted, duplicated, swapped or replaced; words misspelt (opcodes, qualifiers, registers,
locations); type widths changed; random bytes and unicode inserted; truncation; conditions and
operands nested thousands deep; huge numbers and names; blocks repeated into large programs.

``FORMS`` lists the instruction forms each generator covers; ``forms_of(text, fmt)`` says which
ones a program uses (tests/syntax/test_fuzz_front_ends.py checks that a sample covers them all)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import strategies as st

# ===== shared helpers ===============================================================================

SCOPES = ["cta", "cluster", "gpu", "sys"]


def width(t: str) -> int:
    return 1 if t == "pred" else int(t[1:])


def fits(v: int, t: str) -> int:
    """``v`` reduced to what type ``t`` holds (two's complement for .s types)."""
    w = width(t)
    v &= (1 << w) - 1
    return v - (1 << w) if t[0] == "s" and v >> (w - 1) else v


def imm_text(v: int, t: str, style: str = "auto") -> str:
    """An immediate of type ``t`` as PTX text: .s types as (negative) decimals, others decimal or
    hexadecimal; ``style`` may ask for hex/octal/+sign spellings of non-negative values."""
    v = fits(v, t)
    if v < 0:
        return str(v)
    if style == "hex" or (style == "auto" and v >= 256):
        return hex(v).replace("0x", "0X" if style == "HEX" else "0x")
    if style == "octal" and v > 0:
        return "0" + format(v, "o")
    if style == "plus":
        return f"+{v}"
    return str(v)


class _Draw:
    """Small choices over a hypothesis ``draw``."""

    def __init__(self, draw):
        self.draw = draw

    def pick(self, xs):
        return self.draw(st.sampled_from(list(xs)))

    def chance(self, num: int, den: int) -> bool:
        return self.draw(st.integers(0, den - 1)) < num

    def int(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))


@dataclass
class _Loc:
    name: str
    type: str  # data type (a texref/surfref takes its target's)
    space: str  # "global" | "shared"
    root: str  # the physical location (alias chains followed)
    init: int = 0
    proxy: str = "generic"  # the proxy of an alias declaration
    alias: bool = False


@dataclass
class _Budget:
    max_events: int
    max_writes: int
    max_sc: int
    unroll: int
    events: int = 0
    sc: int = 0
    writes: dict[str, int] = field(default_factory=dict)
    next_value: int = 1  # stores write distinct small values, so outcomes tell them apart
    values: set[int] = field(default_factory=lambda: {0, 1, 2})
    stored: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # root → (thread, value)

    def room(self, n: int) -> bool:
        return self.events + n <= self.max_events

    def can_write(self, loc: _Loc, n: int) -> bool:
        return self.writes.get(loc.root, 0) + n <= self.max_writes

    def write(self, loc: _Loc, n: int) -> None:
        self.writes[loc.root] = self.writes.get(loc.root, 0) + n

    def value(self) -> int:
        v = self.next_value
        self.next_value += 1
        self.values.add(v)
        return v


@dataclass
class _Regs:
    """One thread's registers: types, what is defined on every path to here, loop counters."""

    prefix: dict[str, str]
    types: dict[str, str] = field(default_factory=dict)
    defined: set[str] = field(default_factory=set)
    fixed: set[str] = field(default_factory=set)  # readable, never rewritten
    loaded: set[str] = field(default_factory=set)  # hold a value read from memory
    count: dict[str, int] = field(default_factory=dict)
    ends: list[set[str]] = field(default_factory=list)  # defined sets where the thread may end
    fixed_out: set[str] = field(default_factory=set)  # defined but never an operand (addresses)

    def fresh(self, t: str, prefix: str | None = None) -> str:
        p = prefix or self.prefix[t]
        n = self.count.get(p, 0)
        self.count[p] = n + 1
        name = f"{p}{n}"
        self.types[name] = t
        return name

    def regs(self, w: int | None = None, t: str | None = None) -> list[str]:
        return sorted(r for r in self.defined if self.types[r] != "pred" and r not in self.fixed_out
                      and (w is None or width(self.types[r]) == w) and (t is None or self.types[r] == t))

    def writable(self, t: str) -> list[str]:
        return [r for r in self.regs(t=t) if r not in self.fixed]

    def preds(self) -> list[str]:
        return sorted(r for r in self.defined if self.types[r] == "pred")


# ===== .ptx programs ================================================================================

PTX_PREFIX = {"u32": "%r", "s32": "%s", "b32": "%b", "u64": "%rd", "s64": "%sd", "b64": "%bd",
              "u16": "%h", "s16": "%hs", "b16": "%bh", "pred": "%p"}
LOC_TYPES = ["u32", "u32", "u32", "s32", "b32", "u64", "s64", "b64", "u16", "s16"]
IMMS = {16: [0, 1, 2, 0xFFFF, 0x8000, 0x7FFF], 32: [0, 1, 2, 3, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF],
        64: [0, 1, 2, 0xFFFFFFFF, 0x100000000, 0xFFFFFFFFFFFFFFFF, 0x8000000000000000]}
ALU_TYPES = {
    "add": ["u32", "s32", "u64", "s64", "u16", "s16"], "sub": ["u32", "s32", "u64", "s64", "u16", "s16"],
    "mul": ["u32", "s32", "u64", "s64", "u16", "s16"], "min": ["u32", "s32", "u64", "s64", "u16", "s16"],
    "max": ["u32", "s32", "u64", "s64", "u16", "s16"], "and": ["b32", "b64", "b16"],
    "or": ["b32", "b64", "b16"], "xor": ["b32", "b64", "b16"], "not": ["b32", "b64", "b16"],
    "shl": ["b32", "b64", "b16"], "shr": ["b32", "u32", "s32", "b64", "u64", "s64", "u16", "s16"],
    "neg": ["s32", "s64", "s16"]}
ATOM_TYPES = {  # operation → width → types (PTX ISA; no 16-bit integer atomics)
    "add": {32: ["u32", "s32"], 64: ["u64"]}, "inc": {32: ["u32"], 64: []},
    "dec": {32: ["u32"], 64: []}, "exch": {32: ["b32"], 64: ["b64"]}, "cas": {32: ["b32"], 64: ["b64"]},
    "and": {32: ["b32"], 64: ["b64"]}, "or": {32: ["b32"], 64: ["b64"]}, "xor": {32: ["b32"], 64: ["b64"]},
    "min": {32: ["u32", "s32"], 64: ["u64", "s64"]}, "max": {32: ["u32", "s32"], 64: ["u64", "s64"]}}
SURED_TYPES = {"add": ["u32", "s32", "u64"], "min": ["u32", "s32", "u64", "s64"],
               "max": ["u32", "s32", "u64", "s64"], "and": ["b32"], "or": ["b32"]}
CMPS = {"u": ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"],
        "s": ["eq", "ne", "lt", "le", "gt", "ge"], "b": ["eq", "ne"]}
LD_COPS = [".ca", ".cg", ".cs", ".lu", ".cv"]
ST_COPS = [".wb", ".cg", ".cs", ".wt"]
# L1 eviction priorities, then ld's prefetch sizes (ptxas takes an L2 eviction priority on a
# 256-bit vector access only)
EVICT = [".L1::evict_normal", ".L1::evict_unchanged", ".L1::evict_first", ".L1::evict_last",
         ".L1::no_allocate", ".L2::64B", ".L2::128B", ".L2::256B"]


@dataclass
class _PtxThread:
    index: int
    regs: _Regs
    lines: list[str] = field(default_factory=list)
    labels: int = 0
    addr: dict[str, str] = field(default_factory=dict)  # location → register holding its address
    coord: str | None = None  # a register holding the coordinate 0
    tops: list[int] = field(default_factory=list)  # line indices between top-level items


class _PtxGen(_Draw):
    """One thread body at a time, keeping the program-wide budget."""

    def __init__(self, draw, b: _Budget, locs: list[_Loc], label_style: str):
        super().__init__(draw)
        self.b, self.locs, self.label_style = b, locs, label_style
        self.th: _PtxThread

    # -- small pieces ---------------------------------------------------------------------------
    def emit(self, line: str, ind: int) -> None:
        self.th.lines.append("    " * ind + line + ";")

    def label(self) -> str:
        self.th.labels += 1
        n = self.th.labels - 1
        return {"dollar": f"$L{n}", "plain": f"L{n}", "word": f"loop_{n}"}[self.label_style]

    def put_label(self, lab: str, ind: int) -> None:
        self.th.lines.append("    " * max(0, ind - 1) + f"{lab}:")

    def imm(self, t: str, small: bool = False) -> str:
        v = self.pick([0, 1, 2] if small else IMMS[max(16, width(t))])
        if t[0] == "s" and not small and self.chance(1, 4):
            v = -self.pick([1, 2])
        style = self.pick(["auto", "auto", "auto", "hex", "octal", "plus"]) if v >= 0 else "auto"
        return imm_text(v, t, style)

    def operand(self, t: str, reg_share: int = 2) -> str:
        regs = self.th.regs.regs(w=width(t))
        if regs and self.chance(reg_share, 3):
            return self.pick(regs)
        return self.imm(t)

    def dst(self, t: str, guarded: bool) -> str | None:
        """A fresh register of type t, or one written before (always when the write is predicated,
        so that a register is never only conditionally defined)."""
        old = self.th.regs.writable(t)
        if guarded:
            return self.pick(old) if old else None
        if old and self.chance(1, 4):
            return self.pick(old)
        return self.th.regs.fresh(t)

    def define(self, r: str, guarded: bool) -> None:
        if not guarded:
            self.th.regs.defined.add(r)

    def same_width(self, t: str) -> str:
        w = width(t)
        return t if self.chance(2, 3) else self.pick([k + str(w) for k in "usb"])

    def guard(self) -> str:
        preds = self.th.regs.preds()
        if preds and self.chance(1, 4):
            return f"@{'!' if self.chance(1, 2) else ''}{self.pick(preds)} "
        return ""

    # -- locations and addresses ----------------------------------------------------------------
    def loc_for(self, kind: str, write: bool, mult: int) -> _Loc | None:
        """A location ``kind`` (generic / atomic / texture / surface / constant) may access within
        the write budget."""
        ok = []
        for loc in self.locs:
            if kind in ("generic", "atomic") and loc.proxy != "generic":
                continue
            if kind == "atomic" and width(loc.type) == 16:
                continue
            if kind in ("texture", "surface", "constant") and loc.proxy != kind:
                continue
            if write and not self.b.can_write(loc, mult):
                continue
            ok.append(loc)
        return self.pick(ok) if ok else None

    def space(self, loc: _Loc, generic_ok: bool = True) -> str:
        if loc.space == "shared":
            return self.pick([".shared", ".shared", ".shared::cta", ".shared::cluster"])
        return "" if generic_ok and self.chance(1, 6) else ".global"

    def address(self, loc: _Loc, ind: int) -> str:
        """``[x]``, ``[x+0]``, or ``[%ad]`` after ``mov.u64 %ad, x`` (global locations only)."""
        if loc.space == "global" and self.chance(1, 6):
            r = self.th.addr.get(loc.name)
            if r is None or r not in self.th.regs.defined:
                r = self.th.regs.fresh("u64", "%ad")
                self.th.regs.fixed_out.add(r)
                self.emit(f"mov.u64 {r}, {loc.name}", ind)
                self.th.regs.defined.add(r)
                self.th.addr[loc.name] = r
            return f"[{r}]" if self.chance(3, 4) else f"[{r}+0]"
        return f"[{loc.name}+0]" if self.chance(1, 12) else f"[{loc.name}]"

    def coordinate(self, ind: int) -> str:
        """A texture/surface coordinate: ``{0}``, or a register that only ever holds 0."""
        if self.chance(1, 2):
            return "{0}"
        r = self.th.coord
        if r is None or r not in self.th.regs.defined:
            r = self.th.regs.fresh("s32", "%c")
            self.th.regs.fixed.add(r)
            self.emit(f"mov.s32 {r}, 0", ind)
            self.th.regs.defined.add(r)
            self.th.coord = r
        return f"{{{r}}}" if self.chance(1, 2) else r

    # -- memory instructions --------------------------------------------------------------------
    def _events(self, n: int, loc: _Loc | None = None, writes: int = 0) -> None:
        self.b.events += n
        if loc is not None and writes:
            self.b.write(loc, writes)

    def store_value(self, loc: _Loc, t: str) -> str:
        v = self.b.value() if self.chance(3, 4) else self.pick(IMMS[width(t)][3:])
        self.b.stored.setdefault(loc.root, []).append((self.th.index, v))
        return imm_text(v, t)

    def access_quals(self, loc: _Loc, strong: str, cops: list[str], evict: list[str]):
        """The semantics, state space and cache hint of a ld (``strong`` = ".acquire") or st
        (".release"): `.mmio` only on .global (else `.volatile`), hints only on .global accesses,
        cache operators only on weak ones."""
        sem = self.pick(["", ".weak", ".relaxed.S", f"{strong}.S", ".volatile", ".mmio.relaxed.sys",
                         "", ".relaxed.S", f"{strong}.S"]).replace("S", self.pick(SCOPES))
        space = self.space(loc)
        if sem.startswith(".mmio"):
            if loc.space != "global":
                sem = ".volatile"
            else:
                space = ".global"
        hint = ""
        if loc.space != "global":
            pass
        elif sem in ("", ".weak") and self.chance(1, 5):
            hint = self.pick(cops)
        elif not sem.startswith((".mmio", ".volatile")) and self.chance(1, 8):
            hint = self.pick(evict)
        return sem, space, hint

    def loaded(self, d: str, guard: str, mult: int) -> str:
        """After emitting a read into ``d``: its events, ``d`` defined (maybe only under the
        guard) and known to hold a loaded value."""
        self._events(mult)
        self.define(d, bool(guard))
        self.th.regs.loaded.add(d)
        return d

    def reading(self, kind: str, mult: int, guard: str, type_of: Callable[[_Loc], str],
                loc: _Loc | None = None) -> tuple[_Loc, str, str] | None:
        """Before emitting a read: a location of ``kind`` to read, the read's type and its
        destination register; None when there is none."""
        loc = loc or self.loc_for(kind, False, mult)
        if loc is None:
            return None
        t = type_of(loc)
        d = self.dst(t, bool(guard))
        return None if d is None else (loc, t, d)

    def ld(self, ind: int, mult: int, guard: str = "", loc: _Loc | None = None) -> str | None:
        r = self.reading("generic", mult, guard, lambda lc: self.same_width(lc.type), loc)
        if r is None:
            return None
        loc, t, d = r
        sem, space, hint = self.access_quals(loc, ".acquire", LD_COPS, EVICT)
        addr = self.address(loc, ind)
        self.emit(f"{guard}ld{sem}{space}{hint}.{t} {d}, {addr}", ind)
        return self.loaded(d, guard, mult)

    def st(self, ind: int, mult: int, guard: str = "", src: str | None = None,
           loc: _Loc | None = None) -> bool:
        loc = loc or self.loc_for("generic", True, mult)
        if loc is None:
            return False
        w = width(loc.type)
        t = loc.type if w == 16 else self.pick([loc.type, loc.type, f"b{w}"])
        if src is None:
            regs = self.th.regs.regs(w=w)
            src = self.pick(regs) if regs and self.chance(1, 3) else self.store_value(loc, t)
        sem, space, hint = self.access_quals(loc, ".release", ST_COPS, EVICT[:5])
        addr = self.address(loc, ind)
        self.emit(f"{guard}st{sem}{space}{hint}.{t} {addr}, {src}", ind)
        self._events(mult, loc, mult)
        return True

    def rmw(self, ind: int, mult: int, guard: str = "", red: bool = False, op: str | None = None,
            loc: _Loc | None = None) -> str | None:
        loc = loc or self.loc_for("atomic", True, mult)
        if loc is None or not self.b.room(2 * mult):
            return None
        w = width(loc.type)
        ops = [o for o in ATOM_TYPES if ATOM_TYPES[o][w] and (not red or o not in ("exch", "cas"))]
        op = op or self.pick(ops)
        t = self.pick(ATOM_TYPES[op][w])
        sem = self.pick(["", ".relaxed", ".release"] if red else
                        ["", ".relaxed", ".acquire", ".release", ".acq_rel"])
        scope = "." + self.pick(SCOPES) if sem or self.chance(1, 2) else ""
        head = f"{'red' if red else 'atom'}{sem}{scope}{self.space(loc)}.{op}.{t}"
        if op == "cas":  # compare with a value the location may hold, so that some succeed
            held = [loc.init] + [v for _, v in self.b.stored.get(loc.root, [])]
            cmp = self.operand(t, 1) if self.chance(1, 4) else imm_text(self.pick(held), t)
            args = f"{cmp}, {imm_text(self.b.value(), t)}"
        elif op in ("inc", "dec"):
            args = self.pick(["1", "2", "0xFFFFFFFF"])
        else:
            args = self.operand(t, 1) if self.chance(1, 2) else imm_text(self.pick([1, 2]), t)
        addr = self.address(loc, ind)
        self._events(2 * mult, loc, mult)
        if red:
            self.emit(f"{guard}{head} {addr}, {args}", ind)
            return ""
        d = self.dst(t, bool(guard))
        if d is None:  # predicated, without a register of its type: drop the predicate
            guard, d = "", self.th.regs.fresh(t)
        self.emit(f"{guard}{head} {d}, {addr}, {args}", ind)
        self.define(d, bool(guard))
        self.th.regs.loaded.add(d)
        return d

    def ld_const(self, ind: int, mult: int, guard: str = "") -> str | None:
        r = self.reading("constant", mult, guard, lambda lc: self.same_width(lc.type))
        if r is None:
            return None
        loc, t, d = r
        head = self.pick(["ld.const", "ld.const", "ld.weak.const", "ld.const.ca", "ld.weak.const.cg"])
        self.emit(f"{guard}{head}.{t} {d}, [{loc.name}]", ind)
        return self.loaded(d, guard, mult)

    def tex(self, ind: int, mult: int, guard: str = "") -> str | None:
        r = self.reading("texture", mult, guard, lambda lc: self.pick(["s32", "u32"]))
        if r is None:
            return None
        loc, t, d = r
        # the other channels: `_`, or registers nothing reads (their values are unspecified)
        rest = ["_" if self.chance(3, 4) else self.th.regs.fresh(t, "%tx") for _ in range(3)]
        coord = self.coordinate(ind)
        base = ".base" if self.chance(1, 4) else ""
        self.emit(f"{guard}tex{base}.1d.v4.{t}.s32 {{{', '.join([d, *rest])}}}, [{loc.name}, {coord}]",
                  ind)
        return self.loaded(d, guard, mult)

    def suld(self, ind: int, mult: int, guard: str = "") -> str | None:
        r = self.reading("surface", mult, guard, lambda lc: f"b{width(lc.type)}")
        if r is None:
            return None
        loc, t, d = r
        cop = self.pick(["", "", ".ca", ".cg", ".cs", ".cv"])
        clamp = self.pick(["trap", "clamp", "zero"])
        out = f"{{{d}}}" if self.chance(1, 2) else d
        coord = self.coordinate(ind)
        self.emit(f"{guard}suld.b.1d{cop}.{t}.{clamp} {out}, [{loc.name}, {coord}]", ind)
        return self.loaded(d, guard, mult)

    def sust(self, ind: int, mult: int, guard: str = "") -> bool:
        loc = self.loc_for("surface", True, mult)
        if loc is None:
            return False
        w = width(loc.type)
        t = f"b{w}"
        regs = self.th.regs.regs(w=w)
        if regs and self.chance(1, 3):
            v = self.pick(regs)
            v = f"{{{v}}}" if self.chance(1, 2) else v
        else:
            v = self.store_value(loc, t)
        cop = self.pick(["", "", ".wb", ".cg", ".cs", ".wt"])
        clamp = self.pick(["trap", "clamp", "zero"])
        coord = self.coordinate(ind)
        self.emit(f"{guard}sust.b.1d{cop}.{t}.{clamp} [{loc.name}, {coord}], {v}", ind)
        self._events(mult, loc, mult)
        return True

    def sured(self, ind: int, mult: int, guard: str = "") -> bool:
        loc = self.loc_for("surface", True, mult)
        if loc is None or not self.b.room(2 * mult):
            return False
        w = width(loc.type)
        ops = [o for o, ts in SURED_TYPES.items() if any(width(t) == w for t in ts)]
        op = self.pick(ops)
        t = self.pick([t for t in SURED_TYPES[op] if width(t) == w])
        clamp = self.pick(["trap", "clamp", "zero"])
        coord = self.coordinate(ind)
        self.emit(f"{guard}sured.b.{op}.1d.{t}.{clamp} [{loc.name}, {coord}], {self.operand(t, 1)}", ind)
        self._events(2 * mult, loc, mult)
        return True

    def fence(self, ind: int, mult: int, guard: str = "") -> None:
        kind = self.pick(["fence.sc.S", "fence.acq_rel.S", "fence.acquire.S", "fence.release.S",
                          "fence.S", "membar.cta", "membar.gl", "membar.sys", "fence.proxy.alias",
                          "membar.proxy.alias", "fence.proxy.texture", "fence.proxy.surface",
                          "fence.proxy.constant", "fence.acq_rel.S", "fence.sc.S"])
        sc = kind.startswith(("fence.sc", "membar.cta", "membar.gl", "membar.sys"))
        if sc and self.b.sc + mult > self.b.max_sc:
            kind, sc = "fence.acq_rel.S", False
        if sc:
            self.b.sc += mult
        self.emit(guard + kind.replace("S", self.pick(SCOPES)), ind)

    # -- register instructions ------------------------------------------------------------------
    def mov(self, ind: int, t: str | None = None, guard: str = "") -> str:
        t = t or self.pick(["u32", "s32", "b32", "u64", "s64", "b64", "u16", "s16", "b16"])
        d = self.dst(t, bool(guard))
        if d is None:
            guard, d = "", self.th.regs.fresh(t)
        self.emit(f"{guard}mov.{t} {d}, {self.operand(t, 1)}", ind)
        self.define(d, bool(guard))
        return d

    def alu(self, ind: int, guard: str = "") -> None:
        op = self.pick(["add", "sub", "mul", "shl", "shr", "and", "or", "xor", "not", "min", "max",
                        "neg", "add", "sub"])
        have = [t for t in ALU_TYPES[op] if self.th.regs.regs(w=width(t))]
        t = self.pick(have if have and self.chance(3, 4) else ALU_TYPES[op])
        srcs = self.th.regs.regs(w=width(t))
        if not srcs:
            self.mov(ind, t)
            srcs = self.th.regs.regs(w=width(t))
        d = self.dst(t, bool(guard))
        if d is None:
            guard, d = "", self.th.regs.fresh(t)
        a = self.pick(srcs)
        mn = "mul.lo" if op == "mul" else op
        if op in ("not", "neg"):
            self.emit(f"{guard}{mn}.{t} {d}, {a}", ind)
        elif op in ("shl", "shr"):  # the shift amount is a .u32 operand
            amt = self.th.regs.regs(w=32)
            b = self.pick(amt) if amt and self.chance(1, 4) else str(
                self.pick([0, 1, 4, 15, 16, 31, 32, 33, 63, 64]))
            self.emit(f"{guard}{mn}.{t} {d}, {a}, {b}", ind)
        else:
            self.emit(f"{guard}{mn}.{t} {d}, {a}, {self.operand(t)}", ind)
        self.define(d, bool(guard))

    def setp(self, ind: int, guard: str = "", src: str | None = None) -> str:
        if src is None:
            regs = self.th.regs.regs()
            if not regs:
                self.mov(ind)
                regs = self.th.regs.regs()
            loaded = [r for r in regs if r in self.th.regs.loaded]
            src = self.pick(loaded if loaded and self.chance(3, 4) else regs)
        w = width(self.th.regs.types[src])
        t = self.pick([k + str(w) for k in "usb"])
        cmp = self.pick(CMPS[t[0]])
        b = self.operand(t, 1)
        preds = self.th.regs.preds()
        p = self.pick(preds) if guard and preds else self.th.regs.fresh("pred")
        self.emit(f"{guard}setp.{cmp}.{t} {p}, {src}, {b}", ind)
        self.define(p, bool(guard))
        return p

    def selp(self, ind: int, guard: str = "") -> None:
        preds = self.th.regs.preds() or [self.setp(ind)]
        t = self.pick(["u32", "s32", "b32", "u64", "s64", "b64", "u16", "s16", "b16"])
        d = self.dst(t, bool(guard))
        if d is None:
            guard, d = "", self.th.regs.fresh(t)
        self.emit(f"{guard}selp.{t} {d}, {self.operand(t)}, {self.operand(t)}, {self.pick(preds)}", ind)
        self.define(d, bool(guard))

    def mov_pred(self, ind: int) -> None:
        preds = self.th.regs.preds() or [self.setp(ind)]
        d = self.th.regs.fresh("pred")
        self.emit(f"mov.pred {d}, {self.pick(preds)}", ind)
        self.th.regs.defined.add(d)

    # -- structure --------------------------------------------------------------------------------
    def item(self, ind: int, mult: int, depth: int) -> None:
        b = self.b
        kinds = ["fence", "fence", "alu", "alu", "mov", "setp", "selp"]
        if b.room(mult):
            kinds += ["st", "ld", "st", "ld", "pred", "const", "tex", "suld", "sust", "st", "ld", "tex"]
        if b.room(2 * mult):
            kinds += ["atom", "dep", "red", "atom", "sured", "atom", "red", "sured"]
        if depth < 2:
            kinds += ["if", "if", "ifelse"] + (["ret"] if depth == 0 and self.chance(1, 3) else [])
            kinds += ["loop"]
            if b.room(mult * (b.unroll + 1)):
                kinds += ["retry"]
            if b.room(mult):
                kinds += ["await"]
        if self.chance(1, 20):
            kinds.append("movpred")
        getattr(self, "k_" + self.pick(kinds))(ind, mult, depth)

    def block(self, ind: int, mult: int, depth: int, lo: int, hi: int) -> None:
        for _ in range(self.int(lo, hi)):
            if depth == 0:
                self.th.tops.append(len(self.th.lines))
            self.item(ind, mult, depth)

    def k_alu(self, ind, mult, depth):
        self.alu(ind)

    def k_mov(self, ind, mult, depth):
        self.mov(ind)

    def k_movpred(self, ind, mult, depth):
        self.mov_pred(ind)

    def k_setp(self, ind, mult, depth):
        self.setp(ind)

    def k_selp(self, ind, mult, depth):
        self.selp(ind)

    def k_fence(self, ind, mult, depth):
        self.fence(ind, mult, self.guard())

    def k_ld(self, ind, mult, depth):
        self.ld(ind, mult)

    def k_st(self, ind, mult, depth):
        self.st(ind, mult) or self.ld(ind, mult)

    def k_atom(self, ind, mult, depth):
        if self.rmw(ind, mult) is None:
            self.ld(ind, mult)

    def k_red(self, ind, mult, depth):
        if self.rmw(ind, mult, red=True) is None:
            self.ld(ind, mult)

    def k_const(self, ind, mult, depth):
        if self.ld_const(ind, mult) is None:
            self.ld(ind, mult)

    def k_tex(self, ind, mult, depth):
        if self.tex(ind, mult) is None:
            self.ld(ind, mult)

    def k_suld(self, ind, mult, depth):
        if self.suld(ind, mult) is None:
            self.ld(ind, mult)

    def k_sust(self, ind, mult, depth):
        self.sust(ind, mult) or self.st(ind, mult) or self.ld(ind, mult)

    def k_sured(self, ind, mult, depth):
        self.sured(ind, mult) or self.st(ind, mult) or self.ld(ind, mult)

    def k_pred(self, ind, mult, depth):
        """A predicated instruction, under a fresh or an earlier predicate."""
        if not self.th.regs.preds() or self.chance(1, 2):
            self.setp(ind)
        g = f"@{'!' if self.chance(1, 2) else ''}{self.pick(self.th.regs.preds())} "
        what = self.pick(["st", "st", "ld", "atom", "red", "alu", "mov", "selp", "fence", "const",
                          "tex", "suld", "sust", "sured", "setp"])
        done = {"st": lambda: self.st(ind, mult, g), "ld": lambda: self.ld(ind, mult, g),
                "atom": lambda: self.rmw(ind, mult, g), "red": lambda: self.rmw(ind, mult, g, red=True),
                "const": lambda: self.ld_const(ind, mult, g), "tex": lambda: self.tex(ind, mult, g),
                "suld": lambda: self.suld(ind, mult, g), "sust": lambda: self.sust(ind, mult, g),
                "sured": lambda: self.sured(ind, mult, g)}
        if what in done:
            if done[what]() in (None, False):
                self.ld(ind, mult)
        elif what == "fence":
            self.fence(ind, mult, g)
        else:
            getattr(self, what)(ind, guard=g)

    def k_dep(self, ind, mult, depth):
        """A loaded value, maybe through arithmetic, stored elsewhere: a data dependency."""
        r = self.ld(ind, mult)
        if r is None:
            return
        t = self.th.regs.types[r]
        if self.chance(1, 2):
            op = "xor" if t[0] == "b" else self.pick(["add", "sub", "mul.lo"])
            d = self.th.regs.fresh(t)
            self.emit(f"{op}.{t} {d}, {r}, {self.pick([r, self.imm(t)])}", ind)
            self.th.regs.defined.add(d)
            r = d
        same = [x for x in self.locs if x.proxy == "generic" and width(x.type) == width(t)
                and self.b.can_write(x, mult)]
        if same and self.b.room(mult):
            self.st(ind, mult, src=r, loc=self.pick(same))

    def k_if(self, ind, mult, depth):
        """``@%p bra L; <block> L:`` (now and then an unconditional ``bra``: dead code)."""
        preds = self.th.regs.preds()
        p = self.pick(preds) if preds and self.chance(1, 3) else self.setp(ind)
        lab = self.label()
        if self.chance(1, 20):
            self.emit(f"bra{self.pick(['', '.uni'])} {lab}", ind)
        else:
            self.emit(f"@{'!' if self.chance(1, 2) else ''}{p} bra{self.pick(['', '', '.uni'])} {lab}",
                      ind)
        before = set(self.th.regs.defined)
        self.block(ind + 1, mult, depth + 1, 1, 2)
        self.th.regs.defined = before
        self.put_label(lab, ind + 1)

    def k_ifelse(self, ind, mult, depth):
        """``@%p bra ELSE; <then> bra END; ELSE: <else> END:``: what both arms define is defined."""
        p = self.setp(ind)
        els, end = self.label(), self.label()
        self.emit(f"@{p} bra {els}", ind)
        before = set(self.th.regs.defined)
        self.block(ind + 1, mult, depth + 1, 1, 2)
        then = self.th.regs.defined
        self.emit(f"bra.uni {end}", ind + 1)
        self.th.regs.defined = set(before)
        self.put_label(els, ind + 1)
        self.block(ind + 1, mult, depth + 1, 1, 2)
        self.th.regs.defined &= then
        self.put_label(end, ind + 1)

    def k_ret(self, ind, mult, depth):
        p = self.setp(ind)
        self.emit(f"@{'!' if self.chance(1, 2) else ''}{p} {self.pick(['ret', 'exit'])}", ind)
        self.th.regs.ends.append(set(self.th.regs.defined))

    def k_loop(self, ind, mult, depth):
        """A counted loop with a side effect in its body (unrolled, not an await); now and then
        one that runs past the bound."""
        n = self.int(1, max(1, 1 + self.b.unroll // mult))
        if self.chance(1, 16):
            n = self.b.unroll + 2
        style = self.pick(["up", "down", "up64"])
        t = {"up": "u32", "down": "s32", "up64": "u64"}[style]
        c = self.th.regs.fresh(t)
        self.th.regs.fixed.add(c)
        lab = self.label()
        self.emit(f"mov.{t} {c}, {n if style == 'down' else 0}", ind)
        self.th.regs.defined.add(c)
        self.put_label(lab, ind + 1)
        m = mult * min(n, self.b.unroll + 1)
        start = len(self.th.lines)
        self.block(ind + 1, m, depth + 1, 0, 1)
        if not any(s.strip().startswith(("st", "atom", "red", "fence", "membar", "@", "su"))
                   for s in self.th.lines[start:]):
            if not (self.b.room(m) and self.st(ind + 1, m)):
                self.fence(ind + 1, m)
        p = self.th.regs.fresh("pred")
        if style == "down":
            self.emit(f"sub.s32 {c}, {c}, 1", ind + 1)
            self.emit(f"setp.gt.s32 {p}, {c}, 0", ind + 1)
        else:
            self.emit(f"add.{t} {c}, {c}, 1", ind + 1)
            self.emit(f"setp.{self.pick(['lt', 'lo', 'ne'])}.{t} {p}, {c}, {n}", ind + 1)
        self.th.regs.defined.add(p)
        self.emit(f"@{p} bra {lab}", ind)

    def k_retry(self, ind, mult, depth):
        """A CAS lock (retry while another thread holds it) or a load retried while it reads the
        initial value: unrolled, longer executions cut by the bound."""
        m = mult * (self.b.unroll + 1)
        loc = self.loc_for("atomic", True, m) if self.b.room(2 * m) else None
        lab = self.label()
        if loc is not None:
            self.put_label(lab, ind + 1)
            w = width(loc.type)
            sem = self.pick(["", ".acquire.gpu", ".acq_rel.cta", ".relaxed.sys", ".acquire.cluster"])
            d = self.th.regs.fresh(f"b{w}")
            self.emit(f"atom{sem}{self.space(loc)}.cas.b{w} {d}, [{loc.name}], "
                      f"{imm_text(loc.init, loc.type)}, {self.b.value()}", ind + 1)
            self._events(2 * m, loc, m)
        else:
            loc = self.loc_for("generic", True, m)
            if loc is None or not self.b.room(2 * m):
                return self.k_await(ind, mult, depth)
            self.put_label(lab, ind + 1)
            d = self.ld(ind + 1, m, loc=loc)
            self.st(ind + 1, m)
        self.th.regs.defined.add(d)
        self.th.regs.loaded.add(d)
        t = self.th.regs.types[d]
        p = self.th.regs.fresh("pred")
        self.emit(f"setp.{self.pick(['eq', 'ne'])}.{t} {p}, {d}, {imm_text(loc.init, t)}", ind + 1)
        self.th.regs.defined.add(p)
        self.emit(f"@{p} bra {lab}", ind)

    def k_await(self, ind, mult, depth):
        """A side-effect-free spin loop (one await read) for a value another thread stores."""
        waits = [(loc, v) for loc in self.locs if loc.proxy == "generic"
                 for t, v in self.b.stored.get(loc.root, []) if t != self.th.index]
        if not waits:
            self.ld(ind, mult)
            return
        loc, v = self.pick(waits)
        lab = self.label()
        self.put_label(lab, ind + 1)
        d = self.ld(ind + 1, mult, loc=loc)
        t = self.th.regs.types[d]
        p = self.th.regs.fresh("pred")
        self.emit(f"setp.ne.{t} {p}, {d}, {imm_text(v, t)}", ind + 1)
        self.th.regs.defined.add(p)
        self.emit(f"@{p} bra {lab}", ind)


def _placements(d: _Draw, n: int) -> tuple[list[str], list[tuple]]:
    """Thread placement clauses and the CTA each thread lands in."""
    mode = d.pick(["none", "cta", "cta", "cluster", "gpu", "all"])
    texts, keys = [], []
    for i in range(n):
        cta = d.int(0, 1)
        parts: list[tuple[str, int]] = []
        gpu, cluster = 0, None
        if mode == "none":
            cta = i
        if mode in ("cta", "cluster", "gpu", "all"):
            parts.append((".cta", cta))
        if mode in ("cluster", "all"):
            cluster = d.int(0, 1)
            parts.append((".cluster", cluster))
        if mode in ("gpu", "all"):
            gpu = d.int(0, 1)
            parts.append((".gpu", gpu))
        order = d.pick(["gpu-first", "cta-first"])
        parts.sort(key=lambda p: [".gpu", ".cluster", ".cta"].index(p[0]), reverse=order == "cta-first")
        texts.append("".join(f" {k} {v}" for k, v in parts))
        keys.append((gpu, ("implicit", cta) if cluster is None else cluster, cta))
    return texts, keys


def _condition(d: _Draw, refs: list[tuple[str, str]], values: list[int], ptx: bool) -> str:
    """A condition expression over ``refs`` (text, type), with every connective and comparison."""
    ands = ["&&", "&&", "/\\"] if ptx else ["/\\", "/\\", "&&"]
    ors = ["||", "||", "\\/"] if ptx else ["\\/", "\\/", "||"]
    nots = ["!", "!", "~"] if ptx else ["~", "~", "not ", "!"]

    def atom() -> str:
        if d.chance(1, 25):
            return "true"
        ref, t = d.pick(refs)
        op = d.pick(["==", "==", "==", "!=", "=", "<", "<=", ">", ">="])
        if d.chance(1, 8):
            other, _ = d.pick(refs)
            return f"{ref} {op} {other}"
        v = fits(d.pick(values), t) if t != "pred" else d.pick([0, 1])
        return f"{ref} {op} {v}"

    def expr(depth: int) -> str:
        k = d.int(0, 5) if depth < 3 else 0
        if k <= 2:
            return atom()
        if k == 3:
            return f"{d.pick(nots)}({expr(depth + 1)})"
        op = d.pick(ands if k == 4 else ors)
        return f"{expr(depth + 1)} {op} {expr(depth + 1)}" if depth else \
            f"({expr(depth + 1)}) {op} ({expr(depth + 1)})"
    return expr(0)


def _ptx_locations(d: _Draw, lines: list[str]) -> list[_Loc]:
    """Data locations, then aliases of them (generic, texture, surface, constant)."""
    names = d.draw(st.lists(st.sampled_from(["x", "y", "z", "flag", "data", "w"]), min_size=1,
                            max_size=3, unique=True))
    locs: list[_Loc] = []
    for nm in names:
        t = d.pick(LOC_TYPES)
        space = "shared" if d.chance(1, 6) else "global"
        init = 0
        if space == "global" and d.chance(1, 4):
            init = fits(d.pick(IMMS[width(t)][3:] + [5, 7]), t)
        locs.append(_Loc(nm, t, space, nm, init))
        decl = ".global" if space == "global" else d.pick([".shared", ".shared::cta", ".shared::cluster"])
        if space == "shared" and d.chance(1, 2):
            lines.append(f"{decl} .{t} {nm};")
        else:
            lines.append(f"{decl} .{t} {nm} = {imm_text(init, t, d.pick(['auto', 'hex', 'octal', 'plus']))};")
    glob = [x for x in locs if x.space == "global"]
    if glob and d.chance(1, 4):
        x = d.pick(glob)
        locs.append(_Loc("a" + x.name, x.type, "global", x.root, x.init, alias=True))
        lines.append(f".global .{x.type} a{x.name} aliases {x.name};")
    gen = [x for x in locs if x.space == "global"]
    for proxy, prefix in (("texture", "t"), ("surface", "s"), ("constant", "c")):
        ok = [x for x in gen if width(x.type) == 32 or (width(x.type) == 64 and proxy != "texture")
              or proxy == "constant"]
        if ok and d.chance(1, 2):
            x = d.pick(ok)
            nm = f"{prefix}{x.name}"
            locs.append(_Loc(nm, x.type, "global", x.root, x.init, proxy=proxy, alias=True))
            kw = {"texture": ".global .texref", "surface": ".global .surfref",
                  "constant": f".const .{x.type}"}
            lines.append(f"{kw[proxy]} {nm} aliases {x.name};")
    return locs


# A branch (or a guarded ret) forks a thread's events into paths; a barrier placed after one is
# a separate event on each path; the Z3 engine chains a thread's barrier phases per path
# (tests/syntax/test_fuzz_front_ends.py::test_barrier_after_branch_engines_agree), so barriers may go
# anywhere.
BARRIERS_AFTER_FORKS = True
_FORK = re.compile(r"\bbra\b|\bret\b|\bexit\b|^\s*[\w$]+:\s*$|^(beq|bne|blt|ble|bgt|bge|goto)\b|:$")


def _barrier_spots(items: list[str], tops: list[int]) -> list[int]:
    spots = tops + [len(items)]
    if BARRIERS_AFTER_FORKS:
        return spots
    return [i for i in spots if not any(_FORK.search(x.strip()) for x in items[:i])]


def _ptx_barrier(d: _Draw, threads: list[_PtxThread], ctas: list[tuple]) -> None:
    """A CTA barrier: every thread of one CTA passes it (bar.arrive for a producer, now and then)."""
    n = len(threads)
    key = d.pick(ctas)
    members = [i for i in range(n) if ctas[i] == key]
    ident = d.int(0, 3)
    count = f", {len(members)}" if d.chance(1, 2) else ""
    arrive = d.pick(members) if len(members) > 1 and d.chance(1, 3) else None
    for i in members:
        th = threads[i]
        at = d.pick(_barrier_spots(th.lines, th.tops))
        if i == arrive:
            text = f"bar{d.pick(['', '.cta'])}.arrive {ident}, {len(members)}"
        else:
            text = d.pick(["bar.sync", "barrier.sync", "bar.cta.sync", "barrier.cta.sync.aligned",
                           "barrier.sync.aligned"]) + f" {ident}{count}"
        th.lines.insert(at, f"    {text};")


def _reg_decls(d: _Draw, th: _PtxThread) -> list[str]:
    """``.reg`` declarations of a thread's registers (``%r<n>`` ranges now and then)."""
    by_type: dict[str, list[str]] = {}
    for r, t in th.regs.types.items():
        by_type.setdefault(t, []).append(r)
    body = []
    for t in sorted(by_type):
        groups: dict[str, list[str]] = {}
        for r in sorted(by_type[t]):
            groups.setdefault(re.sub(r"\d+$", "", r), []).append(r)
        decl = []
        for p, rs in sorted(groups.items()):
            ns = sorted(int(r[len(p):]) for r in rs)
            decl += [f"{p}<{len(ns)}>"] if ns == list(range(len(ns))) and d.chance(1, 2) else rs
        body.append(f"    .reg .{t} {', '.join(decl)};")
    return body


def _ptx_thread_text(d: _Draw, th: _PtxThread, head: str, declare: bool) -> str:
    body = _reg_decls(d, th) if declare else []
    tl = list(th.lines)
    if d.chance(1, 6):
        tl.insert(d.int(0, len(tl)), d.pick(["    // a comment", "    /* block\n       comment */",
                                             "    # hash comment"]))
    if d.chance(1, 8) and not any(ln.strip() in ("ret;", "exit;") for ln in tl):
        tl.append(f"    {d.pick(['ret', 'exit'])};")
    return f".thread {head} {{\n" + "\n".join(body + tl) + "\n}"


def _ptx_condition(d: _Draw, threads: list[_PtxThread], tnames: list[str], locs: list[_Loc],
                   b: _Budget, lines: list[str]) -> None:
    refs: list[tuple[str, str]] = []
    for th in threads:
        final = set.intersection(*th.regs.ends) - th.regs.fixed_out
        name = tnames[th.index] if d.chance(4, 5) else str(th.index)
        refs += [(f"{name}:{r}", th.regs.types[r]) for r in sorted(final) if th.regs.types[r] != "pred"]
    refs += [(x.name, x.type) for x in locs if x.space == "global" and x.proxy == "generic"]
    if not refs or not d.chance(3, 4):
        return
    values = sorted(b.values) + [0xFFFFFFFF, -1, 0x80000000]
    quant = d.pick(["exists", "exists", "~exists", "forall"])
    expect = {"exists": ["allowed", "forbidden", "holds", "fails"],
              "~exists": ["allowed", "forbidden", "holds", "fails"],
              "forall": ["required", "holds", "fails"]}[quant]
    if d.chance(1, 3):
        lines.insert(1 if lines[0].startswith(".test") else 0, f".expect {d.pick(expect)}{d.pick(['', ';'])}")
    lines.append(f"{quant} ({_condition(d, refs, values, ptx=True)})")


@st.composite
def valid_ptx(draw, max_threads: int = 3, max_events: int = 6, max_writes: int = 2, max_sc: int = 2,
              unroll: int = 2) -> str:
    """A well-formed `.ptx` program (see the module docstring), small enough for brute force
    with ``--unroll unroll``."""
    d = _Draw(draw)
    b = _Budget(max_events, max_writes, max_sc, unroll)
    lines: list[str] = []
    if d.chance(1, 2):
        name = d.pick(["MP", "SB+rel-acq", "LB.fenced", "t_1", "IRIW+x=y", "fuzz"])
        desc = f' "{d.pick(["generated", "a fuzzed program", ""])}"' if d.chance(1, 2) else ""
        lines.append(f".test {name}{desc}{d.pick(['', ';'])}")
    locs = _ptx_locations(d, lines)
    n = d.pick([k for k in (2, 3, 2, 1, 3) if k <= max_threads])
    places, ctas = _placements(d, n)
    tnames = [d.pick([f"T{i}", f"P{i}", f"thr{i}"]) for i in range(n)]
    tnames = [t if tnames.count(t) == 1 else f"T{i}" for i, t in enumerate(tnames)]
    g = _PtxGen(draw, b, locs, d.pick(["dollar", "plain", "word"]))
    threads: list[_PtxThread] = []
    for i in range(n):
        g.th = _PtxThread(i, _Regs(PTX_PREFIX))
        g.block(1, 1, 0, 1, 4)
        if not any(s.strip().startswith(("ld", "st", "atom", "red", "@", "tex", "su")) for s in g.th.lines) \
                and b.room(1):
            g.ld(1, 1)
        g.th.regs.ends.append(set(g.th.regs.defined))
        threads.append(g.th)
    if d.chance(1, 5):
        _ptx_barrier(d, threads, ctas)
    declare = d.chance(1, 3)
    lines += [_ptx_thread_text(d, th, tnames[i] + places[i], declare) for i, th in enumerate(threads)]
    _ptx_condition(d, threads, tnames, locs, b, lines)
    return "\n".join(lines) + "\n"


# ===== Dat3M .litmus tests ==========================================================================

LIT_IMMS = [0, 1, 2, 3, -1, 0x10, 2147483647, -2147483648]


@dataclass
class _LitThread:
    index: int
    regs: _Regs
    cells: list[str] = field(default_factory=list)
    labels: int = 0
    tops: list[int] = field(default_factory=list)  # cell indices between top-level items


class _LitGen(_Draw):
    def __init__(self, draw, b: _Budget, locs: list[_Loc]):
        super().__init__(draw)
        self.b, self.locs = b, locs
        self.th: _LitThread

    def emit(self, cell: str) -> None:
        self.th.cells.append(cell)

    def label(self) -> str:
        self.th.labels += 1
        return self.pick([f"LC{self.th.index}{self.th.labels - 1:01d}", f"L{self.th.labels - 1}"])

    def fresh(self) -> str:
        return self.th.regs.fresh("s32")

    def val(self, reg_share: int = 1) -> str:
        regs = self.th.regs.regs()
        if regs and self.chance(reg_share, 3):
            return self.pick(regs)
        v = self.pick(LIT_IMMS[:5] + LIT_IMMS)
        return hex(v) if v > 9 and self.chance(1, 2) else str(v)

    def dst(self) -> str:
        old = self.th.regs.writable("s32")
        return self.pick(old) if old and self.chance(1, 4) else self.fresh()

    def loc_for(self, proxy: str, write: bool, mult: int) -> _Loc | None:
        ok = [x for x in self.locs if x.proxy == proxy and (not write or self.b.can_write(x, mult))]
        return self.pick(ok) if ok else None

    def sem(self, allowed: list[str]) -> str:
        s = self.pick(allowed)
        scope = self.pick(["cta", "gpu", "sys", "cluster", "gpu"])
        return {"weak": ".weak", "volatile": ".volatile", "mmio": ".mmio.relaxed.sys"}.get(s, f".{s}.{scope}")

    # -- instructions ---------------------------------------------------------------------------
    def ld(self, mult: int, loc: _Loc | None = None) -> str | None:
        mn = self.pick(["ld", "ld", "ld", "tld", "suld", "cold"])
        proxy = {"ld": "generic", "tld": "texture", "suld": "surface", "cold": "constant"}[mn]
        loc = loc or self.loc_for(proxy, False, mult) or self.loc_for("generic", False, mult)
        if loc is None:
            return None
        mn = {"generic": "ld", "texture": "tld", "surface": "suld", "constant": "cold"}[loc.proxy]
        allowed = ["weak", "relaxed", "acquire"] + (["volatile", "mmio"] if mn == "ld" else [])
        d = self.dst()
        self.emit(f"{mn}{self.sem(allowed)} {d}, {loc.name}")
        self.b.events += mult
        self.th.regs.defined.add(d)
        self.th.regs.loaded.add(d)
        return d

    def st(self, mult: int, src: str | None = None) -> bool:
        mn = self.pick(["st", "st", "sust"])
        loc = (self.loc_for("surface", True, mult) if mn == "sust" else None) or \
            self.loc_for("generic", True, mult)
        if loc is None:
            return False
        mn = "sust" if loc.proxy == "surface" else "st"
        if src is None:
            regs = self.th.regs.regs()
            if regs and self.chance(1, 3):
                src = self.pick(regs)
            else:
                v = self.b.value() if self.chance(3, 4) else self.pick(LIT_IMMS[3:])
                self.b.stored.setdefault(loc.root, []).append((self.th.index, v))
                src = hex(v) if v > 9 and self.chance(1, 2) else str(v)
        allowed = ["weak", "relaxed", "release"] + (["volatile", "mmio"] if mn == "st" else [])
        self.emit(f"{mn}{self.sem(allowed)} {loc.name}, {src}")
        self.b.events += mult
        self.b.write(loc, mult)
        return True

    def rmw(self, mult: int, red: bool = False) -> bool:
        if not self.b.room(2 * mult):
            return False
        mn = self.pick(["red", "red", "sured"] if red else ["atom", "atom", "suatom"])
        loc = (self.loc_for("surface", True, mult) if mn.startswith("su") else None) or \
            self.loc_for("generic", True, mult)
        if loc is None:
            return False
        mn = ("su" if loc.proxy == "surface" else "") + ("red" if red else "atom")
        ops = ["add", "sub", "mul", "and", "or", "xor", "inc", "dec", "min", "max"]
        op = self.pick(ops if red else ops + ["exch", "cas", "cas", "add"])
        sem = self.pick(["", ".relaxed.S", ".acquire.S", ".release.S", ".acq_rel.S", ".relaxed",
                         ".S", ".acq_rel"]).replace("S", self.pick(["cta", "gpu", "sys", "cluster"]))
        self.b.events += 2 * mult
        self.b.write(loc, mult)
        if red:
            self.emit(f"{mn}{sem}.{op} {loc.name}, {self.val()}")
            return True
        d = self.dst()
        if op == "cas":
            held = [loc.init] + [v for _, v in self.b.stored.get(loc.root, [])]
            args = f"{self.pick(held) if self.chance(3, 4) else self.val()}, {self.b.value()}"
        else:
            args = self.val()
        self.emit(f"{mn}{sem}.{op} {d}, {loc.name}, {args}")
        self.th.regs.defined.add(d)
        self.th.regs.loaded.add(d)
        return True

    def fence(self, mult: int) -> None:
        kind = self.pick(["fence.sc.S", "fence.acq_rel.S", "fence.S", "fence.proxy.alias",
                          "fence.proxy.texture", "fence.proxy.surface", "fence.proxy.constant",
                          "fence.acq_rel.S"])
        if kind.startswith("fence.sc"):
            if self.b.sc + mult > self.b.max_sc:
                kind = "fence.acq_rel.S"
            else:
                self.b.sc += mult
        self.emit(kind.replace("S", self.pick(["cta", "gpu", "sys", "cluster"])))

    def local(self) -> None:
        if self.chance(1, 3) or not self.th.regs.regs():
            d = self.dst()
            self.emit(f"{self.pick(['ld', 'ld', 'tld', 'suld', 'cold'])} {d}, {self.val()}")
        else:
            d = self.dst()
            op = self.pick(["add", "sub", "mul", "and", "or", "xor"])
            self.emit(f"{op} {d}, {self.val(2)}, {self.val()}")
        self.th.regs.defined.add(d)

    # -- structure --------------------------------------------------------------------------------
    def item(self, mult: int, depth: int) -> None:
        kinds = ["fence", "local", "local"]
        if self.b.room(mult):
            kinds += ["ld", "st", "ld", "st", "ld"]
        if self.b.room(2 * mult):
            kinds += ["atom", "red", "dep", "atom", "red"]
        if depth < 2:
            kinds += ["if", "if", "goto", "loop"]
            if self.b.room(mult):
                kinds += ["await"]
        getattr(self, "k_" + self.pick(kinds))(mult, depth)

    def block(self, mult: int, depth: int, lo: int, hi: int) -> None:
        for _ in range(self.int(lo, hi)):
            if depth == 0:
                self.th.tops.append(len(self.th.cells))
            self.item(mult, depth)

    def k_fence(self, mult, depth):
        self.fence(mult)

    def k_local(self, mult, depth):
        self.local()

    def k_ld(self, mult, depth):
        self.ld(mult)

    def k_st(self, mult, depth):
        self.st(mult) or self.ld(mult)

    def k_atom(self, mult, depth):
        self.rmw(mult) or self.ld(mult)

    def k_red(self, mult, depth):
        self.rmw(mult, red=True) or self.ld(mult)

    def k_dep(self, mult, depth):
        r = self.ld(mult)
        if r is not None and self.chance(1, 2):
            d = self.fresh()
            self.emit(f"{self.pick(['add', 'xor', 'mul', 'sub'])} {d}, {r}, {self.pick([r, '1', '0'])}")
            self.th.regs.defined.add(d)
            r = d
        if r is not None:
            self.st(mult, src=r)

    def branch(self, target: str) -> None:
        regs = self.th.regs.regs()
        loaded = [r for r in regs if r in self.th.regs.loaded]
        a = self.pick(loaded) if loaded and self.chance(3, 4) else self.val(2)
        mn = self.pick(["beq", "bne", "blt", "ble", "bgt", "bge"])
        b = self.val()
        self.emit(f"{mn} {a}, {b}, {target}" if self.chance(5, 6) else f"{mn} {b}, {a}, {target}")

    def k_if(self, mult, depth):
        lab = self.label()
        self.branch(lab)
        before = set(self.th.regs.defined)
        self.block(mult, depth + 1, 1, 2)
        self.th.regs.defined = before
        self.emit(f"{lab}:")

    def k_goto(self, mult, depth):
        """``bxx a, b, ELSE; <then> goto END; ELSE: <else> END:``."""
        els, end = self.label(), self.label()
        self.branch(els)
        before = set(self.th.regs.defined)
        self.block(mult, depth + 1, 1, 2)
        then = self.th.regs.defined
        self.emit(f"goto {end}")
        self.th.regs.defined = set(before)
        self.emit(f"{els}:")
        self.block(mult, depth + 1, 1, 2)
        self.th.regs.defined &= then
        self.emit(f"{end}:")

    def k_loop(self, mult, depth):
        """A counted loop (``ld rc, 0`` ... ``add rc, rc, 1; blt rc, N, L``) with a side effect."""
        n = self.int(1, max(1, 1 + self.b.unroll // mult))
        c = self.fresh()
        self.th.regs.fixed.add(c)
        self.emit(f"ld {c}, 0")
        self.th.regs.defined.add(c)
        lab = self.label()
        self.emit(f"{lab}:")
        m = mult * min(n, self.b.unroll + 1)
        start = len(self.th.cells)
        self.block(m, depth + 1, 0, 1)
        if not any(s.startswith(("st", "atom", "red", "fence", "su")) for s in self.th.cells[start:]):
            if not (self.b.room(m) and self.st(m)):
                self.fence(m)
        self.emit(f"add {c}, {c}, 1")
        self.emit(f"blt {c}, {n}, {lab}")

    def k_await(self, mult, depth):
        waits = [(x, v) for x in self.locs if x.proxy == "generic"
                 for t, v in self.b.stored.get(x.root, []) if t != self.th.index]
        if not waits:
            self.ld(mult)
            return
        loc, v = self.pick(waits)
        lab = self.label()
        self.emit(f"{lab}:")
        d = self.ld(mult, loc=loc)
        self.emit(f"bne {d}, {v}, {lab}")


def _lit_init(d: _Draw, n: int) -> tuple[list[_Loc], list[str], list[str]]:
    """The init block's locations, copies (z = x) and aliases through every proxy."""
    names = d.draw(st.lists(st.sampled_from(["x", "y", "flag", "data"]), min_size=1, max_size=3,
                            unique=True))
    locs: list[_Loc] = []
    decls: list[str] = []
    for nm in names:
        init = d.pick([0, 0, 0, 1, -1, 0x10, 7])
        locs.append(_Loc(nm, "s32", "global", nm, init))
        text = d.pick([str(init), hex(init) if init >= 0 else str(init),
                       f"0{init}" if init >= 0 else str(init)])
        decls.append(f"{nm} = {text}")
    if d.chance(1, 4):
        x = d.pick(locs[: len(names)])
        locs.append(_Loc("z", "s32", "global", "z", x.init))
        decls.append(f"z = {d.pick(['', '&'])}{x.name}")
    for proxy, prefix in (("generic", "a"), ("texture", "t"), ("surface", "s"), ("constant", "c")):
        if d.chance(1, 3):
            x = d.pick([loc for loc in locs if not loc.alias or loc.proxy == "generic"])
            nm = f"{prefix}{x.name}"
            locs.append(_Loc(nm, "s32", "global", x.root, x.init, proxy=proxy, alias=True))
            decls.append(f"{nm} @ {proxy} aliases {x.name}")
    return locs, decls, names


def _lit_init_regs(d: _Draw, g: _LitGen, i: int, names: list[str], decls: list[str]) -> None:
    """Registers with an initial value (or a location's address)."""
    for _ in range(d.int(0, 1)):
        r = g.fresh()
        tid = d.pick([f"P{i}", str(i)])
        if d.chance(1, 4):
            decls.append(f"{tid}:{r} = {d.pick(['&', ''])}{d.pick(names)}")
            g.th.regs.fixed_out.add(r)
        else:
            decls.append(f"{tid}:{r} = {d.pick(LIT_IMMS[:5])}")
        g.th.regs.defined.add(r)


def _lit_barrier(d: _Draw, threads: list[_LitThread], ctas: list[int], gpus: list[int]) -> None:
    """A CTA barrier every thread of one CTA passes (bar.cta.arrive for a producer)."""
    n = len(threads)
    key = d.pick(list(zip(ctas, gpus)))
    members = [i for i in range(n) if (ctas[i], gpus[i]) == key]
    ident = d.int(0, 2)
    ops = d.pick([f"{ident}", f"{ident}, {ident}", f"{ident}, {ident}, {len(members)}"])
    arrive = d.pick(members) if len(members) > 1 and ops.count(",") == 2 and d.chance(1, 3) else None
    for i in members:
        th = threads[i]
        kind = "arrive" if i == arrive else "sync"
        th.cells.insert(d.pick(_barrier_spots(th.cells, th.tops)), f"bar.cta.{kind} {ops}")


def _lit_rows(d: _Draw, threads: list[_LitThread]) -> list[str]:
    out = []
    rows = max((len(t.cells) for t in threads), default=0)
    for k in range(rows):
        cells = [t.cells[k] if k < len(t.cells) else "" for t in threads]
        while cells and not cells[-1] and d.chance(1, 2) and len(cells) > 1:
            cells.pop()  # fewer cells than threads
        row = " | ".join(c.ljust(12) for c in cells)
        if d.chance(1, 12):
            row += " (* comment; with | *)"
        out.append(f" {row} ;")
    return out


def _lit_tail(d: _Draw, threads: list[_LitThread], locs: list[_Loc], b: _Budget) -> list[str]:
    """locations [...], filter, and the condition."""
    refs: list[tuple[str, str]] = []
    for t in threads:
        final = set.intersection(*t.regs.ends) - t.regs.fixed_out
        refs += [(f"{d.pick([f'P{t.index}', str(t.index)])}:{r}", "s32") for r in sorted(final)]
    mem = [x.name for x in locs]
    tail = []
    if d.chance(1, 6):
        items = [r for r, _ in refs[:2]] + mem[:2]
        tail.append(f"locations [{'; '.join(items)};]")
    lrefs = refs + [(d.pick([m, f"{m}[0]", f"[{m}]"]), "s32") for m in mem]
    values = sorted(b.values) + [-1, 0x10]
    expr = _condition(d, lrefs, values, ptx=False)
    # Dat3M reads a bare location on the right of a comparison as its address: write x[0]
    expr = re.sub(r"([=<>]) (\[?)([A-Za-z_]\w*)\]?(?![\[:\w])",
                  lambda m: f"{m.group(1)} {m.group(3)}[0]", expr)
    if d.chance(1, 8):
        expr = f"{d.pick(values)} {d.pick(['=', '<', '>='])} {d.pick(refs or [(f'{mem[0]}[0]', 's32')])[0]}"
    if d.chance(1, 8) and refs:
        tail.append(f"filter ({d.pick(refs)[0]} = {d.pick(values)})")
    quant = d.pick(["exists", "exists", "~exists", "~ exists", "not exists", "forall", "final"])
    if quant == "final":
        tail.append(f"final ({expr}) with tso: exists; default: ~exists;")
    else:
        tail.append(f"{quant} ({expr}){d.pick(['', ';'])}")
    return tail


@st.composite
def valid_litmus(draw, max_threads: int = 3, max_events: int = 6, max_writes: int = 2,
                 max_sc: int = 2, unroll: int = 2) -> str:
    """A well-formed Dat3M `.litmus` test (see the module docstring)."""
    d = _Draw(draw)
    b = _Budget(max_events, max_writes, max_sc, unroll)
    n = d.pick([k for k in (2, 3, 2, 1, 3) if k <= max_threads])
    locs, decls, names = _lit_init(d, n)
    g = _LitGen(draw, b, locs)
    threads: list[_LitThread] = []
    for i in range(n):
        g.th = _LitThread(i, _Regs({"s32": "r"}))
        _lit_init_regs(d, g, i, names, decls)
        g.block(1, 0, 1, 4)
        if not any(c.startswith(("ld.", "st.", "atom", "red", "tld.", "suld.", "cold.", "sust", "su"))
                   for c in g.th.cells) and b.room(1):
            g.ld(1)
        g.th.regs.ends.append(set(g.th.regs.defined))
        threads.append(g.th)
    ctas = [d.int(0, 1) for _ in range(n)]
    gpus = [0 if d.chance(4, 5) else 1 for _ in range(n)]
    if d.chance(1, 5):
        _lit_barrier(d, threads, ctas, gpus)
    out = [f"PTX {d.pick(['MP', 'SB+fences', 'fuzz_1', 'LB-rel-acq'])}"]
    if d.chance(1, 3):
        out.append('"a generated test"')
    sep = d.pick(["; ", ";\n", " ; "])
    init = sep.join(decls) + (";" if decls and d.chance(2, 3) else "")
    out.append("{" + (" " + init + " " if init else "") + "}" + d.pick(["", ";"]))
    heads = []
    for i in range(n):
        tid = f"P{i}" if d.chance(5, 6) else str(i)
        heads.append(d.pick([f"{tid}@cta {ctas[i]},gpu {gpus[i]}", f"{tid} @ cta {ctas[i]} , gpu {gpus[i]}"]))
    out.append(" " + " | ".join(heads) + " ;")
    out += _lit_rows(d, threads)
    if d.chance(1, 10):
        out.append("// a line comment")
    return "\n".join(out + _lit_tail(d, threads, locs, b)) + "\n"


# ===== instruction forms covered ====================================================================

# (form, regular expression over one instruction's text); forms_of() reports which occur
PTX_FORMS = [
    ("ld", r"^ld(\.weak)?(\.global|\.shared\S*)?(\.\w+)?\.[usb]\d+ "),
    ("ld.weak", r"^ld\.weak\.(?!const)"), ("ld.relaxed.scope", r"^ld\.relaxed\.(cta|cluster|gpu|sys)"),
    ("ld.acquire.scope", r"^ld\.acquire\."), ("ld.volatile", r"^ld\.volatile"), ("ld.mmio", r"^ld\.mmio"),
    ("ld cache op", r"^ld\S*\.(ca|cg|cs|lu|cv)\.[usb]"), ("ld eviction hint", r"^ld\S*\.L[12]::"),
    ("st", r"^st(\.weak)?(\.global|\.shared\S*)?(\.\w+)?\.[usb]\d+ "), ("st.relaxed.scope", r"^st\.relaxed"),
    ("st.release.scope", r"^st\.release"), ("st.volatile", r"^st\.volatile"), ("st.mmio", r"^st\.mmio"),
    ("st cache op", r"^st\S*\.(wb|cg|cs|wt)\.[usb]"),
    ("generic addressing", r"^(ld|st|atom|red)[^ ]*?(?<!global)(?<!shared)(?<!cta)(?<!cluster)"
                           r"\.[a-z_]+\.[usb]\d+ (?!.*\.(global|shared))"),
    (".shared", r"^\S+\.shared\.\S* "), (".shared::cta", r"\.shared::cta\."),
    (".shared::cluster", r"\.shared::cluster\."),
    ("register address", r"\[%ad\d+(\+0)?\]"), ("offset +0", r"\+0\]"),
    *[(f"atom.{op}", rf"^atom\S*\.{op}\.") for op in ATOM_TYPES],
    *[(f"atom.{s}", rf"^atom\.{s}\.") for s in ("relaxed", "acquire", "release", "acq_rel")],
    *[(f"red.{op}", rf"^red\S*\.{op}\.") for op in ATOM_TYPES if op not in ("exch", "cas")],
    ("red.release", r"^red\.release"),
    *[(f"fence.{s}.scope", rf"^fence\.{s}\.(cta|cluster|gpu|sys)")
      for s in ("sc", "acq_rel", "acquire", "release")],
    ("fence.scope", r"^fence\.(cta|cluster|gpu|sys)"),
    *[(f"fence .{s}", rf"^fence\.\w+\.{s}\b") for s in SCOPES],
    *[(f"membar.{lvl}", rf"^membar\.{lvl}\b") for lvl in ("cta", "gl", "sys")],
    ("fence.proxy.alias", r"^fence\.proxy\.alias"), ("membar.proxy.alias", r"^membar\.proxy\.alias"),
    *[(f"fence.proxy.{k}", rf"^fence\.proxy\.{k}") for k in ("texture", "surface", "constant")],
    ("bar.sync", r"^bar(\.cta)?\.sync"), ("barrier.sync", r"^barrier(\.cta)?\.sync"),
    ("bar.arrive", r"^bar(\.cta)?\.arrive"), ("barrier .aligned", r"\.aligned"),
    ("mov", r"^mov\.[usb]"), ("mov address", r"^mov\.u64 %ad"), ("mov.pred", r"^mov\.pred"),
    *[(op, rf"^{op}\.") for op in ("add", "sub", "mul.lo", "and", "or", "xor", "not", "shl", "shr", "min",
                                    "max", "neg", "setp", "selp")],
    *[(f"setp.{c}", rf"^setp\.{c}\.") for c in CMPS["u"]],
    ("@%p guard", r"^@%"), ("@!%p guard", r"^@!%"), ("bra", r"^(@\S+ )?bra "), ("bra.uni", r"bra\.uni "),
    ("ret", r"ret$"), ("exit", r"exit$"),
    ("ld.const", r"^(@\S+ )?ld(\.weak)?\.const"), ("tex", r"^(@\S+ )?tex\.1d"), ("tex.base", r"tex\.base"),
    ("tex channels in registers", r"%tx\d"), ("suld", r"^(@\S+ )?suld\.b\.1d"),
    ("suld {d}", r"^(@\S+ )?suld\S* \{"),
    ("sust", r"^(@\S+ )?sust\.b\.1d"), *[(f"sured.{op}", rf"sured\.b\.{op}\.") for op in SURED_TYPES],
    ("coordinate {0}", r"\{0\}\]"), ("coordinate {%c}", r"\{%c\d+\}\]"), ("coordinate %c", r", %c\d+\]"),
    *[(f"64-bit {k}", rf"^(@\S+ )?{k}\S*\.[usb]64[ .]") for k in ("ld", "st", "atom", "red", "suld", "sust")],
    *[(f"16-bit {k}", rf"^(@\S+ )?{k}\S*\.[usb]16 ") for k in ("ld", "st", "add", "mov")],
]
PTX_DECLS = [
    (".test", r"^\.test "), (".expect", r"^\.expect "), (".global", r"^\.global \.[usb]"),
    (".shared", r"^\.shared \."), (".shared::cta", r"^\.shared::cta "),
    (".shared::cluster", r"^\.shared::cluster "),
    ("no initialiser", r"^\.shared\S* \.\w+ \w+;"), ("alias", r"^\.global \.[usb]\d+ \w+ aliases"),
    (".texref", r"\.texref \w+ aliases"), (".surfref", r"\.surfref \w+ aliases"),
    (".const alias", r"^\.const "),
    (".reg", r"^\s*\.reg "), (".reg %r<n>", r"<\d+>"), (".cta", r"\.cta \d"), (".cluster", r"\.cluster \d"),
    (".gpu", r"\.gpu \d"), ("exists", r"^exists "), ("~exists", r"^~exists"), ("forall", r"^forall"),
    ("&&", r"&&"), ("||", r"\|\|"), ("/\\", r"/\\"), ("\\/", r"\\/"), ("!", r"!\("), ("~(", r"~\("),
    ("true", r"\btrue\b"), ("thread index ref", r"[( ]\d+:%"), ("ref == ref", r"== \w+:%"),
    *[(f"cmp {op}", rf"^(~?exists|forall)\b.* {re.escape(op)} ")
      for op in ("==", "!=", "<", "<=", ">", ">=", "=")],
    ("comment //", r"// "), ("comment /* */", r"/\*"), ("comment #", r"# hash"), ("hex literal", r"0x"),
    ("octal literal", r"= 0[0-7]+;"), ("+ literal", r"= \+\d"),
]
LITMUS_FORMS = [
    *[(f"{mn}.{s}", rf"^{mn}\.{s}\b") for mn in ("ld", "tld", "suld", "cold")
      for s in ("weak", "relaxed", "acquire")],
    ("ld.volatile", r"^ld\.volatile"), ("ld.mmio", r"^ld\.mmio"), ("st.volatile", r"^st\.volatile"),
    ("st.mmio", r"^st\.mmio"),
    *[(f"{mn}.{s}", rf"^{mn}\.{s}\b") for mn in ("st", "sust") for s in ("weak", "relaxed", "release")],
    *[(f"scope .{s}", rf"^\w+\.\w+\.{s}\b") for s in ("cta", "gpu", "sys", "cluster")],
    *[(f"{mn} r, v", rf"^{mn} r\d+, (-?\d|0x|r)") for mn in ("ld", "tld", "suld", "cold")],
    *[(f"{op} r, v, v", rf"^{op} r\d+, ") for op in ("add", "sub", "mul", "and", "or", "xor")],
    *[(f"atom.{op}", rf"^atom\S*\.{op} ") for op in ("add", "sub", "mul", "and", "or", "xor", "inc", "dec",
                                                      "min", "max", "exch", "cas")],
    ("suatom", r"^suatom"), *[(f"red.{op}", rf"^red\S*\.{op} ") for op in ("add", "sub", "mul", "and", "or",
                                                                         "xor", "inc", "dec", "min", "max")],
    ("sured", r"^sured"), ("atom without semantics", r"^(su)?atom\.(cta|gpu|sys|cluster|\w+ )"),
    *[(f"atom.{s}", rf"^(su)?atom\.{s}\.") for s in ("relaxed", "acquire", "release", "acq_rel")],
    *[(f"red.{s}", rf"^(su)?red\.{s}\.") for s in ("relaxed", "acquire", "release", "acq_rel")],
    ("fence.sc", r"^fence\.sc\."), ("fence.acq_rel", r"^fence\.acq_rel\."),
    ("fence.scope", r"^fence\.(cta|gpu|sys|cluster)$"),
    *[(f"fence.proxy.{k}", rf"^fence\.proxy\.{k}") for k in ("alias", "texture", "surface", "constant")],
    ("bar.cta.sync c", r"^bar\.cta\.sync \d+$"), ("bar.cta.sync c, id", r"^bar\.cta\.sync \d+, \d+$"),
    ("bar.cta.sync c, id, n", r"^bar\.cta\.sync \d+, \d+, \d+"), ("bar.cta.arrive", r"^bar\.cta\.arrive"),
    ("label", r"^\w+:$"), ("goto", r"^goto "),
    *[(mn, rf"^{mn} ") for mn in ("beq", "bne", "blt", "ble", "bgt", "bge")],
]
LITMUS_DECLS = [
    ("x = n", r"[{;] *\w+ = -?\d"), ("x = 0x", r"\w+ = 0x"), ("z = x", r"z = [a-z]"), ("z = &x", r"z = &"),
    ("P:r = n", r"P\d:r\d+ = -?\d"), ("n:r = n", r"[ ;{]\d:r\d+ = -?\d"), ("P:r = &x", r"\d:r\d+ = &"),
    ("P:r = x", r"\d:r\d+ = [a-z]"),
    *[(f"@ {p} aliases", rf"@ {p} aliases") for p in ("generic", "texture", "surface", "constant")],
    ("P0@cta 0,gpu 0", r"P\d@cta"), ("0 @ cta 0 , gpu 0", r"\d @ cta"), ("doc string", r'^"'),
    ("empty cell", r"\|\s+\||\|\s+;"), ("(* comment *)", r"\(\*"), ("// comment", r"^//"),
    ("locations", r"^locations \["), ("filter", r"^filter "), ("exists", r"^exists"),
    ("~exists", r"^~exists"),
    ("~ exists", r"^~ exists"), ("not exists", r"^not exists"), ("forall", r"^forall"),
    ("final ... with", r"^final "),
    ("/\\", r"/\\"), ("\\/", r"\\/"), ("&&", r"&&"), ("||", r"\|\|"), ("~", r"~\("), ("not", r"not \("),
    ("!", r"!\("), ("true", r"\btrue\b"), ("x[0]", r"\w\[0\]"), ("[x]", r"\[[a-z]\w*\] "),
    ("constant on the left", r"\(-?\d+ [=<>]"), ("n:r ref", r"[( ]\d:r\d"),
    *[(f"cmp {op}", rf"^(~ ?exists|exists|not exists|forall|final|filter)\b.* {re.escape(op)} ")
      for op in ("==", "!=", "<", "<=", ">", ">=", "=")],
]
FORMS = {"ptx": [f for f, _ in PTX_FORMS + PTX_DECLS], "litmus": [f for f, _ in LITMUS_FORMS + LITMUS_DECLS]}


def _ptx_instrs(text: str) -> list[str]:
    body = []
    for block in re.findall(r"^\.thread [^{]*\{(.*?)^\}", text, re.S | re.M):
        block = re.sub(r"/\*.*?\*/|//[^\n]*|#[^\n]*|^\s*[\w$]+:\s*$", "", block, flags=re.S | re.M)
        body += [s.strip() for s in block.split(";")]
    return [s for s in body if s and not s.startswith(".reg") and not s.endswith(":")]


def _litmus_cells(text: str) -> list[str]:
    rows = text.split("\n")
    out = []
    for row in rows[3:]:
        if row.startswith(" ") and row.rstrip().endswith(";") and "@" not in row:
            body = re.sub(r"\(\*.*?\*\)", "", row).rstrip().rstrip(";")
            out += [c.strip() for c in body.split("|") if c.strip()]
    return out


def forms_of(text: str, fmt: str) -> set[str]:
    """The forms of ``FORMS[fmt]`` that a program drawn from valid_ptx / valid_litmus uses."""
    if fmt == "ptx":
        ins, decl = PTX_FORMS, PTX_DECLS
        items = _ptx_instrs(text)
        lines = text.splitlines()
    else:
        ins, decl = LITMUS_FORMS, LITMUS_DECLS
        items = _litmus_cells(text)
        lines = text.splitlines()
    out = {f for f, rx in ins if any(re.search(rx, i) for i in items)}
    out |= {f for f, rx in decl if any(re.search(rx, ln) for ln in lines)}
    return out


# ===== mutations ====================================================================================

_TOKEN = re.compile(r"%?[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z0-9_:]+)*|0[xX][0-9a-fA-F]+|\d+|\s+|.", re.S)
VOCAB = ("ld st atom red fence membar bar barrier mov add sub mul and or xor not shl shr min max neg setp "
         "selp bra ret exit tex tld4 suld sust sured tld cold suatom goto beq bne blt div cvta ldu prefetch "
         "weak relaxed acquire release acq_rel sc volatile mmio cta cluster gpu sys gl global shared "
         "shared::cta shared::cluster const local param tex proxy alias texture surface constant async "
         "u32 s32 b32 u64 s64 b64 u16 s16 u8 s8 b8 f32 f64 f16 pred v2 v4 1d 2d b p trap clamp zero "
         "ca cg cs lu cv wb wt nc exch cas inc dec lo hi wide sat eq ne lt le gt ge hs ls uni sync arrive "
         "aligned red texref surfref aliases exists forall filter locations final with true not PTX "
         "x y z flag data T0 T1 P0 P1 %r0 %r1 %p0 %rd0 r0 r1 LC00 $L0").split()
WEIRD = ["\x00", "\t", "\r", "\r\n", "\x0b", "\x0c", "\ufeff", "\u200b", "\u202e", "\u2028", "\u0301",
         "é", "ß", "İ", "ﬁ", "Ｌ", "ｌｄ", "٣", "𝟙", "😀", "漢字", "\U0010ffff", "\x7f", "\x1b[31m",
         "\\", "\"", "'", "`", "$", "%%", "@@", "::", "..", "{", "}", "[", "]", "(", ")", "|", ";", ",",
         "(*", "*)", "/*", "*/", "//", "#", "~", "!", "&&", "/\\", "\\/", "->", "<", ">", "<<2>>"]
HUGE = ["18446744073709551616", "18446744073709551615", "-9223372036854775809", "4294967296",
        "-4294967297", "340282366920938463463374607431768211457", "0x" + "F" * 40, "0x", "0X0",
        "9" * 400, "0" * 300 + "1", "08", "09", "0b101", "1e9", "-0", "+-1", "2147483648",
        "-2147483649", "99999999999999999999999999999"]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _misspell(d: _Draw, word: str) -> str:
    parts = word.split(".")
    k = d.int(0, len(parts) - 1)
    p = parts[k]
    how = d.pick(["drop", "insert", "swap", "replace", "case", "vocab", "dropq", "dupq", "reorder"])
    i = d.int(0, max(0, len(p) - 1))
    letters = "abcdefghijklmnopqrstuvwxyz0123456789_%"
    if how == "drop" and p:
        p = p[:i] + p[i + 1:]
    elif how == "insert":
        p = p[:i] + d.pick(letters) + p[i:]
    elif how == "swap" and len(p) > 1:
        i = min(i, len(p) - 2)
        p = p[:i] + p[i + 1] + p[i] + p[i + 2:]
    elif how == "replace" and p:
        p = p[:i] + d.pick(letters) + p[i + 1:]
    elif how == "case":
        p = p.upper() if p.islower() else p.lower()
    elif how == "vocab":
        p = d.pick(VOCAB)
    elif how == "dropq" and len(parts) > 1:
        del parts[k]
        return ".".join(parts)
    elif how == "dupq":
        parts.insert(k, p)
        return ".".join(parts)
    elif how == "reorder" and len(parts) > 2:
        j = d.int(1, len(parts) - 1)
        parts[k], parts[j] = parts[j], parts[k]
        return ".".join(parts)
    parts[k] = p
    return ".".join(parts)


def _tok_edit(d: _Draw, text: str, how: str) -> str:
    """Token edits: delete, duplicate, swap, replace; misspell a word; huge numbers; long names."""
    toks = _tokens(text)
    solid = [i for i, t in enumerate(toks) if not t.isspace()]
    words = [i for i in solid if re.match(r"%?[A-Za-z_$]", toks[i])]
    if how == "tok_delete" and solid:
        del toks[d.pick(solid)]
    elif how == "tok_dup" and solid:
        i = d.pick(solid)
        toks.insert(i, toks[i] + d.pick(["", " "]))
    elif how == "tok_swap" and len(solid) > 1:
        i, j = d.pick(solid), d.pick(solid)
        toks[i], toks[j] = toks[j], toks[i]
    elif how == "tok_replace" and solid:
        toks[d.pick(solid)] = d.pick(VOCAB + WEIRD[14:])
    elif how == "misspell" and words:
        i = d.pick(words)
        toks[i] = _misspell(d, toks[i])
    elif how == "huge":
        nums = [i for i in solid if re.fullmatch(r"\d+|0[xX][0-9a-fA-F]+", toks[i])]
        if not nums:
            return text + d.pick(HUGE)
        toks[d.pick(nums)] = d.pick(HUGE)
    elif how == "longname" and words:
        i = d.pick(words)
        toks[i] = toks[i] + "q" * d.pick([100, 5000, 100000])
    return "".join(toks)


def _line_edit(d: _Draw, text: str, how: str) -> str:
    """Line edits: delete, duplicate (anywhere), swap."""
    lines = text.split("\n")
    if how == "line_delete" and len(lines) > 1:
        del lines[d.int(0, len(lines) - 1)]
    elif how == "line_dup":
        i = d.int(0, len(lines) - 1)
        lines.insert(d.int(0, len(lines)), lines[i])
    elif how == "line_swap" and len(lines) > 1:
        i, j = d.int(0, len(lines) - 1), d.int(0, len(lines) - 1)
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def _width(d: _Draw, text: str) -> str:
    """A type width changed (to another width, a float, .pred, .b128, nonsense)."""
    spots = list(re.finditer(r"\.[usbf](8|16|32|64)\b|\b[usb](8|16|32|64)\b", text))
    if not spots:
        return text
    m = d.pick(spots)
    new = d.pick([".u8", ".s8", ".b8", ".u16", ".s16", ".b16", ".u32", ".s32", ".b32", ".u64", ".s64",
                  ".b64", ".f32", ".f64", ".f16", ".pred", ".b128", ".u31", ".u", ".texref"])
    if not m.group(0).startswith("."):
        new = new[1:]
    return text[:m.start()] + new + text[m.end():]


def _garbage(d: _Draw, text: str) -> str:
    """Odd characters, random text or bytes inserted anywhere."""
    i = d.int(0, len(text))
    piece = d.draw(st.one_of(st.sampled_from(WEIRD), st.text(max_size=8),
                             st.binary(max_size=6).map(lambda bs: bs.decode("latin-1"))))
    return text[:i] + piece + text[i:]


def _mutate(d: _Draw, text: str, litmus: bool) -> str:
    how = d.pick(["tok_delete", "tok_dup", "tok_swap", "tok_replace", "line_delete", "line_dup",
                  "line_swap", "misspell", "misspell", "width", "garbage", "truncate", "nest",
                  "huge", "longname", "repeat", "tok_delete", "misspell", "width"])
    if how.startswith("line_"):
        return _line_edit(d, text, how)
    other = {"width": lambda: _width(d, text), "garbage": lambda: _garbage(d, text),
             "truncate": lambda: text[:d.int(0, len(text))], "nest": lambda: _nest(d, text, litmus),
             "repeat": lambda: _repeat(d, text, litmus)}
    if how in other:
        return other[how]()
    return _tok_edit(d, text, how)


def _nest(d: _Draw, text: str, litmus: bool) -> str:
    """Nesting thousands deep: negations and parentheses in the condition, braces and brackets in
    operands, comment openers."""
    n = d.pick([2, 50, 500, 1000, 3000, 10000])
    where = d.pick(["cond_not", "cond_paren", "cond_both", "operand", "anywhere"])
    m = re.search(r"^(~ ?exists|exists|forall|not exists|final)\s*", text, re.M)
    if where.startswith("cond") and m:
        neg = d.pick(["~", "not "]) if litmus else d.pick(["!", "~"])
        rest = text[m.end():]
        tail = ""
        if litmus and " with " in rest:
            rest, tail = rest.split(" with ", 1)
            tail = " with " + tail
        rest = rest.rstrip().rstrip(";")
        if where == "cond_not":
            body = neg * n + rest
        elif where == "cond_paren":
            body = "(" * n + rest + ")" * n
        else:
            body = (neg + "(") * n + rest + ")" * n
        return text[:m.end()] + body + tail + "\n"
    opener, closer = d.pick([("{", "}"), ("[", "]"), ("(", ")"), ("(*", "*)"), ("/*", "*/")])
    i = d.int(0, len(text))
    if where == "operand":
        spots = [k.start() for k in re.finditer(r"[\[{]", text)]
        if spots:
            i = d.pick(spots)
    return text[:i] + opener * n + closer * d.pick([0, n]) + text[i:]


def _repeat(d: _Draw, text: str, litmus: bool) -> str:
    """A block repeated into a large program: instruction lines, whole threads, or rows."""
    k = d.pick([3, 20, 200, 2000])
    lines = text.split("\n")
    if litmus:
        rows = [i for i, ln in enumerate(lines) if ln.startswith(" ") and ln.rstrip().endswith(";")]
        if rows:
            i = d.pick(rows)
            return "\n".join(lines[:i] + [lines[i]] * k + lines[i:])
    else:
        threads = list(re.finditer(r"^\.thread (\w+)[^{]*\{.*?^\}\n", text, re.S | re.M))
        if threads and d.chance(1, 2):
            t = d.pick(threads)
            copies = [re.sub(r"^\.thread \w+", f".thread {t.group(1)}_{j}", t.group(0)) for j in range(k)]
            return text[:t.end()] + "".join(copies) + text[t.end():]
        body = [i for i, ln in enumerate(lines) if ln.startswith("    ") and ln.rstrip().endswith(";")]
        if body:
            i = d.pick(body)
            return "\n".join(lines[:i] + [lines[i]] * k + lines[i:])
    return text * min(k, 50)


@st.composite
def mutated(draw, strategy) -> str:
    """Mutations of programs drawn from ``strategy`` (see the module docstring): 1 to 4 edits."""
    d = _Draw(draw)
    text = draw(strategy)
    litmus = text.lstrip().startswith(("PTX", "ptx"))
    for _ in range(d.int(1, 4)):
        text = _mutate(d, text, litmus)
    return text

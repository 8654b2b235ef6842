"""Hypothesis strategies: random small litmus programs in the .ptx language."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

SCOPES = ["cta", "gpu", "sys"]
LOCS = ["x", "y"]


@st.composite
def instruction(draw, reg: int) -> str:
    kind = draw(st.sampled_from(["ld", "st", "fence", "atom", "ldst_dep"]))
    loc = draw(st.sampled_from(LOCS))
    scope = draw(st.sampled_from(SCOPES))
    if kind == "ld":
        sem = draw(st.sampled_from(["", ".relaxed", ".acquire"]))
        return f"ld{sem}{'.' + scope if sem else ''}.global.u32 %r{reg}, [{loc}]"
    if kind == "st":
        sem = draw(st.sampled_from(["", ".relaxed", ".release"]))
        val = draw(st.integers(1, 2))
        return f"st{sem}{'.' + scope if sem else ''}.global.u32 [{loc}], {val}"
    if kind == "fence":
        sem = draw(st.sampled_from(["sc", "acq_rel"]))
        return f"fence.{sem}.{scope}"
    if kind == "atom":
        sem = draw(st.sampled_from(["relaxed", "acquire", "release", "acq_rel"]))
        op = draw(st.sampled_from(["add.u32", "exch.b32"]))
        return f"atom.{sem}.{scope}.global.{op} %r{reg}, [{loc}], 1"
    # a load whose value is stored elsewhere (data dependency)
    other = "y" if loc == "x" else "x"
    return f"ld.global.u32 %r{reg}, [{loc}];\n    st.global.u32 [{other}], %r{reg}"


@st.composite
def program(draw, max_threads: int = 3, max_instrs: int = 2) -> str:
    n = draw(st.integers(2, max_threads))
    lines = [".global .u32 x = 0;", ".global .u32 y = 0;"]
    for t in range(n):
        cta = draw(st.integers(0, 1))
        k = draw(st.integers(1, max_instrs))
        body = [draw(instruction(i)) for i in range(k)]
        lines.append(f".thread T{t} .cta {cta} {{\n    " + ";\n    ".join(body) + ";\n}")
    return "\n".join(lines) + "\n"


# ----- rich programs ------------------------------------------------------------------------------
# Programs for engine agreement over machine-integer semantics: typed registers (.u16 .s16 .u32
# .s32 .b32 .u64 .s64 .b64), wrap-around constants, signed and unsigned comparisons, predication,
# forward branches, bounded loops, RMWs, fences at every scope, threads in CTAs / clusters / GPUs
# and an optional condition. Every register is written (unconditionally) before it is read, each
# register keeps one type, and every instruction is one that `syntax/instr.py` decodes and ptxas
# accepts.

ALL_SCOPES = ["cta", "cluster", "gpu", "sys"]
REG_TYPES = ["u32", "s32", "b32", "u64", "s64", "b64", "u16", "s16"]
PREFIX = {"u32": "%r", "s32": "%s", "b32": "%b", "u64": "%rd", "s64": "%sd", "b64": "%bd",
          "u16": "%h", "s16": "%hs"}
# (name, type, space): the locations a program may use; the first ones are the most common
LOC_POOL = [("x", "u32", "global"), ("y", "u32", "global"), ("z", "u64", "global"),
            ("w", "s32", "global"), ("h", "u16", "global"), ("sh", "u32", "shared")]
# interesting immediates per width: small values, all-ones, sign bit, the 2^32 boundary
IMMS = {16: [0, 1, 2, 0xFFFF, 0x8000, 0x7FFF],
        32: [0, 1, 2, 3, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0xFFFFFFFE],
        64: [0, 1, 2, 0xFFFFFFFF, 0x100000000, 0xFFFFFFFFFFFFFFFF, 0x8000000000000000,
             0x7FFFFFFFFFFFFFFF]}
SHIFTS = [0, 1, 4, 15, 16, 31, 32, 33, 63, 64]
ALU_TYPES = {  # PTX ISA: which types each register operation takes
    "add": ["u32", "s32", "u64", "s64", "u16", "s16"],
    "sub": ["u32", "s32", "u64", "s64", "u16", "s16"],
    "mul": ["u32", "s32", "u64", "s64", "u16", "s16"],  # written mul.lo
    "min": ["u32", "s32", "u64", "s64", "u16", "s16"],
    "max": ["u32", "s32", "u64", "s64", "u16", "s16"],
    "and": ["b32", "b64"], "or": ["b32", "b64"], "xor": ["b32", "b64"], "not": ["b32", "b64"],
    "shl": ["b32", "b64"],
    "shr": ["b32", "u32", "s32", "b64", "u64", "s64"],
    "neg": ["s32", "s64", "s16"],
}
# atom/red operation → types of width 32 / 64 (inc/dec only .u32; no 16-bit atomics)
ATOM_TYPES = {
    "add": {32: ["u32", "s32"], 64: ["u64"]},
    "inc": {32: ["u32"], 64: []},
    "dec": {32: ["u32"], 64: []},
    "exch": {32: ["b32"], 64: ["b64"]},
    "cas": {32: ["b32"], 64: ["b64"]},
    "and": {32: ["b32"], 64: ["b64"]},
    "or": {32: ["b32"], 64: ["b64"]},
    "xor": {32: ["b32"], 64: ["b64"]},
    "min": {32: ["u32", "s32"], 64: ["u64", "s64"]},
    "max": {32: ["u32", "s32"], 64: ["u64", "s64"]},
}
CMPS = {"u": ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"],
        "s": ["eq", "ne", "lt", "le", "gt", "ge"],
        "b": ["eq", "ne"]}


def width(t: str) -> int:
    return int(t[1:])


def imm_text(v: int, t: str) -> str:
    """An immediate as PTX text; .s types take negative decimals for values with the sign bit."""
    w = width(t)
    v &= (1 << w) - 1
    if t.startswith("s") and v >> (w - 1):
        return str(v - (1 << w))
    return str(v) if v < 256 else hex(v).upper().replace("0X", "0x")


def print_value(v: int, t: str) -> int:
    """A value as an outcome prints it: unsigned for .u/.b types, two's complement for .s."""
    w = width(t)
    v &= (1 << w) - 1
    return v - (1 << w) if t.startswith("s") and v >> (w - 1) else v


@dataclass
class _Prog:
    locs: list[tuple[str, str, str]]
    unroll: int
    max_events: int
    max_writes: int
    max_sc: int
    events: int = 0
    sc: int = 0
    writes: dict[str, int] = field(default_factory=dict)
    values: set[int] = field(default_factory=lambda: {0, 1, 2})  # small values stored/compared
    next_value: int = 1  # stores write distinct small values, so outcomes tell them apart
    inits: dict[str, int] = field(default_factory=dict)
    stored: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # loc → (thread, value)


@dataclass
class _Thread:
    index: int
    lines: list[str] = field(default_factory=list)
    types: dict[str, str] = field(default_factory=dict)  # register → its one type
    defined: set[str] = field(default_factory=set)  # written on every path to this point
    fixed: set[str] = field(default_factory=set)  # loop counters: readable, never rewritten
    preds: int = 0
    labels: int = 0
    ends: list[set[str]] = field(default_factory=list)  # defined sets at each (predicated) ret
    loaded: set[str] = field(default_factory=set)  # registers that received a loaded value
    count: dict[str, int] = field(default_factory=dict)

    def fresh(self, t: str) -> str:
        n = self.count.get(t, 0)
        self.count[t] = n + 1
        name = f"{PREFIX[t]}{n}"
        self.types[name] = t
        return name

    def fresh_pred(self) -> str:
        self.preds += 1
        name = f"%p{self.preds - 1}"
        self.types[name] = "pred"
        return name

    def regs(self, w: int | None = None, t: str | None = None) -> list[str]:
        """Defined value registers (by width or exact type), in a stable order."""
        return sorted(r for r in self.defined if self.types[r] != "pred"
                      and (w is None or width(self.types[r]) == w)
                      and (t is None or self.types[r] == t))

    def writable(self, t: str) -> list[str]:
        return [r for r in self.regs(t=t) if r not in self.fixed]

    def pred_regs(self) -> list[str]:
        return sorted(r for r in self.defined if self.types[r] == "pred")

    def emit(self, line: str, indent: int) -> None:
        self.lines.append("    " * indent + line + ";")


class _Gen:
    """Draws one thread body, keeping the program-wide memory-event budget."""

    def __init__(self, draw, prog: _Prog, th: _Thread, allow_loops: bool, allow_branches: bool):
        self.draw, self.p, self.th = draw, prog, th
        self.loops, self.branches = allow_loops, allow_branches

    # -- small choices -------------------------------------------------------------------------
    def pick(self, xs):
        return self.draw(st.sampled_from(list(xs)))

    def chance(self, num: int, den: int) -> bool:
        return self.draw(st.integers(0, den - 1)) < num

    def imm(self, t: str, small: bool = False) -> str:
        w = width(t)
        v = self.pick([0, 1, 2] if small else IMMS[w])
        if t.startswith("s") and not small and self.chance(1, 4):
            v = -self.pick([1, 2])
        return imm_text(v, t)

    def operand(self, t: str, reg_share: int = 2) -> str:
        """A defined register of t's width (2 times in 3 by default), or an immediate."""
        regs = self.th.regs(w=width(t))
        if regs and self.chance(reg_share, 3):
            return self.pick(regs)
        return self.imm(t)

    def dst(self, t: str, guarded: bool) -> str | None:
        """A destination of type t: a fresh register, or one already written (always when the
        write is predicated, so a register is never only conditionally defined)."""
        old = self.th.writable(t)
        if guarded:
            return self.pick(old) if old else None
        if old and self.chance(1, 4):
            return self.pick(old)
        return self.th.fresh(t)

    def define(self, r: str, guarded: bool) -> None:
        if not guarded:
            self.th.defined.add(r)

    def loc_for(self, write: bool, mult: int, atomic: bool = False):
        """A location whose write budget allows `mult` more writes (None if none does)."""
        ok = [loc for loc in self.p.locs
              if not (atomic and loc[1] == "u16")
              and (not write or self.p.writes.get(loc[0], 0) + mult <= self.p.max_writes)]
        return self.pick(ok) if ok else None

    @staticmethod
    def space(loc) -> str:
        return ".shared" if loc[2] == "shared" else ".global"

    def mem_space(self, loc) -> str:
        # generic addressing (no state space) now and then: only for .global, whose generic
        # address is the variable's own (a .shared one would need cvta first)
        return "" if loc[2] == "global" and self.chance(1, 6) else self.space(loc)

    def guard(self) -> str:
        preds = self.th.pred_regs()
        if preds and self.chance(1, 4):
            return f"@{'!' if self.chance(1, 2) else ''}{self.pick(preds)} "
        return ""

    # -- memory instructions ---------------------------------------------------------------
    def room(self, n: int) -> bool:
        return self.p.events + n <= self.p.max_events

    def ld(self, ind: int, mult: int, guard: str = "", loc=None) -> str | None:
        loc = loc or self.loc_for(False, mult)
        w = width(loc[1])
        t = self.pick([k + str(w) for k in ("u", "s", "b")] if w != 16 else ["u16", "s16"])
        if w == 32 and self.chance(2, 3):
            t = loc[1]
        d = self.dst(t, bool(guard))
        if d is None:
            return None
        sem = self.pick(["", ".weak", ".relaxed.S", ".acquire.S", ".volatile"])
        sem = sem.replace("S", self.pick(ALL_SCOPES))
        self.th.emit(f"{guard}ld{sem}{self.mem_space(loc)}.{t} {d}, [{loc[0]}]", ind)
        self.p.events += mult
        self.define(d, bool(guard))
        self.th.loaded.add(d)
        return d

    def st(self, ind: int, mult: int, guard: str = "", src: str | None = None, loc=None) -> bool:
        loc = loc or self.loc_for(True, mult)
        if loc is None:
            return False
        w = width(loc[1])
        t = loc[1] if w == 16 else self.pick([loc[1], loc[1], f"b{w}"])
        if src is None:
            regs = self.th.regs(w=w)
            if regs and self.chance(1, 3):
                src = self.pick(regs)
            else:
                v = self.p.next_value if self.chance(3, 4) else self.pick(IMMS[w][3:])
                if v == self.p.next_value:
                    self.p.next_value += 1
                    self.p.values.add(v)
                self.p.stored.setdefault(loc[0], []).append((self.th.index, v))
                src = imm_text(v, t)
        sem = self.pick(["", ".weak", ".relaxed.S", ".release.S", ".volatile"])
        sem = sem.replace("S", self.pick(ALL_SCOPES))
        self.th.emit(f"{guard}st{sem}{self.mem_space(loc)}.{t} [{loc[0]}], {src}", ind)
        self.p.events += mult
        self.p.writes[loc[0]] = self.p.writes.get(loc[0], 0) + mult
        return True

    def rmw(self, ind: int, mult: int, guard: str = "", red: bool = False,
            op: str | None = None, loc=None) -> str | None:
        loc = loc or self.loc_for(True, mult, atomic=True)
        if loc is None:
            return None
        w = width(loc[1])
        ops = [o for o in ATOM_TYPES if ATOM_TYPES[o][w] and (not red or o not in ("exch", "cas"))]
        op = op or self.pick(ops)
        t = self.pick(ATOM_TYPES[op][w])
        sems = ["", ".relaxed", ".release"] if red else ["", ".relaxed", ".acquire", ".release",
                                                           ".acq_rel"]
        sem = self.pick(sems)
        scope = self.pick(ALL_SCOPES) if sem or self.chance(1, 2) else ""
        head = f"{'red' if red else 'atom'}{sem}{'.' + scope if scope else ''}{self.space(loc)}.{op}.{t}"
        if op == "cas":  # compare with a value the location may hold, so some succeed
            held = [self.p.inits[loc[0]]] + [v for _, v in self.p.stored.get(loc[0], [])]
            cmp = self.operand(t, 1) if self.chance(1, 4) else imm_text(self.pick(held), t)
            args = f"{cmp}, {imm_text(self.p.next_value, t)}"
            self.p.next_value += 1
        elif op in ("inc", "dec"):
            args = self.pick(["1", "2", "0xFFFFFFFF"])
        else:
            args = self.operand(t, 1) if not self.chance(1, 2) else imm_text(self.pick([1, 2]), t)
        self.p.events += 2 * mult
        self.p.writes[loc[0]] = self.p.writes.get(loc[0], 0) + mult
        if red:
            self.th.emit(f"{guard}{head} [{loc[0]}], {args}", ind)
            return ""
        d = self.dst(t, bool(guard))
        if d is None:  # predicated atom without a register of its type: drop the predicate
            guard, d = "", self.th.fresh(t)
        self.th.emit(f"{guard}{head} {d}, [{loc[0]}], {args}", ind)
        self.define(d, bool(guard))
        self.th.loaded.add(d)
        return d

    def fence(self, ind: int, mult: int, guard: str = "") -> None:
        kind = self.pick(["sc", "acq_rel", "acquire", "release", "acq_rel", "membar.gl",
                          "membar.cta", "membar.sys"])
        if (kind == "sc" or kind.startswith("membar")) and self.p.sc + mult > self.p.max_sc:
            kind = "acq_rel"
        if kind == "sc" or kind.startswith("membar"):
            self.p.sc += mult
        text = kind if kind.startswith("membar") else f"fence.{kind}.{self.pick(ALL_SCOPES)}"
        self.th.emit(f"{guard}{text}", ind)

    # -- register instructions ---------------------------------------------------------------
    def alu(self, ind: int, guard: str = "") -> None:
        op = self.pick(["add", "sub", "mul", "shl", "shr", "and", "or", "xor", "not", "min", "max",
                        "neg", "add", "sub"])
        # mostly a type whose width already has a register (a loaded value, say)
        have = [t for t in ALU_TYPES[op] if self.th.regs(w=width(t))]
        t = self.pick(have if have and self.chance(3, 4) else ALU_TYPES[op])
        srcs = self.th.regs(w=width(t))
        if not srcs:  # materialise a value of this width first
            self.mov(ind, t)
            srcs = self.th.regs(w=width(t))
        d = self.dst(t, bool(guard))
        if d is None:
            guard, d = "", self.th.fresh(t)
        a = self.pick(srcs)
        mn = "mul.lo" if op == "mul" else op
        if op in ("not", "neg"):
            self.th.emit(f"{guard}{mn}.{t} {d}, {a}", ind)
        elif op in ("shl", "shr"):
            amt = self.th.regs(w=32)
            b = self.pick(amt) if amt and width(t) == 32 and self.chance(1, 4) else \
                str(self.pick([s for s in SHIFTS if s <= width(t) + 1]))
            self.th.emit(f"{guard}{mn}.{t} {d}, {a}, {b}", ind)
        else:
            self.th.emit(f"{guard}{mn}.{t} {d}, {a}, {self.operand(t)}", ind)
        self.define(d, bool(guard))

    def mov(self, ind: int, t: str | None = None, guard: str = "") -> None:
        t = t or self.pick(REG_TYPES[:6])
        d = self.dst(t, bool(guard))
        if d is None:
            guard, d = "", self.th.fresh(t)
        src = self.operand(t, 1)
        self.th.emit(f"{guard}mov.{t} {d}, {src}", ind)
        self.define(d, bool(guard))

    def setp(self, ind: int, guard: str = "", src: str | None = None) -> str:
        regs = self.th.regs()
        if src is None:
            if not regs:
                self.mov(ind)
                regs = self.th.regs()
            # prefer registers that hold loaded values (a branch on them forks paths)
            loaded = [r for r in regs if r in self.th.loaded]
            src = self.pick(loaded if loaded and self.chance(3, 4) else regs)
        w = width(self.th.types[src])
        t = self.pick([k + str(w) for k in ("u", "s", "b")] if w != 16 else ["u16", "s16"])
        cmp = self.pick(CMPS[t[0]])
        b = self.operand(t, 1)
        p = self.th.fresh_pred() if not guard or not self.th.pred_regs() else \
            self.pick(self.th.pred_regs())
        self.th.emit(f"{guard}setp.{cmp}.{t} {p}, {src}, {b}", ind)
        self.define(p, bool(guard))
        return p

    def selp(self, ind: int, guard: str = "") -> None:
        preds = self.th.pred_regs()
        if not preds:
            preds = [self.setp(ind)]
        t = self.pick(REG_TYPES)
        d = self.dst(t, bool(guard))
        if d is None:
            guard, d = "", self.th.fresh(t)
        self.th.emit(f"{guard}selp.{t} {d}, {self.operand(t)}, {self.operand(t)}, "
                     f"{self.pick(preds)}", ind)
        self.define(d, bool(guard))

    # -- structure ---------------------------------------------------------------------------
    def label(self) -> str:
        self.th.labels += 1
        return f"$L{self.th.labels - 1}"

    def item(self, ind: int, mult: int, depth: int) -> None:
        # memory operations first: Hypothesis leans to the first choices and shrinks towards them
        kinds = []
        if self.room(mult):
            kinds += ["st", "ld", "st", "ld", "pred", "st", "ld"]
        if self.room(2 * mult):
            kinds += ["atom", "dep", "red", "atom", "dep"]
        kinds += ["fence", "fence", "alu", "alu", "alu", "mov", "setp", "selp"]
        if depth < 2 and self.branches:
            kinds += ["if", "if"] + (["ret"] if depth == 0 and self.chance(1, 3) else [])
        if depth < 2 and self.loops:
            kinds += ["loop", "loop"]  # a fence keeps a loop body without memory events
            if self.room(mult * (self.p.unroll + 1)):
                kinds += ["retry", "retry"]
            if self.room(mult):
                kinds += ["await"]
        kind = self.pick(kinds)
        getattr(self, "k_" + kind)(ind, mult, depth)

    def block(self, ind: int, mult: int, depth: int, lo: int, hi: int) -> None:
        for _ in range(self.draw(st.integers(lo, hi))):
            self.item(ind, mult, depth)

    def k_alu(self, ind, mult, depth):
        self.alu(ind)

    def k_mov(self, ind, mult, depth):
        self.mov(ind)

    def k_setp(self, ind, mult, depth):
        self.setp(ind)

    def k_selp(self, ind, mult, depth):
        self.selp(ind)

    def k_fence(self, ind, mult, depth):
        self.fence(ind, mult, self.guard())

    def k_ld(self, ind, mult, depth):
        self.ld(ind, mult)

    def k_st(self, ind, mult, depth):
        if not self.st(ind, mult):
            self.ld(ind, mult)

    def k_atom(self, ind, mult, depth):
        if self.rmw(ind, mult) is None:
            self.ld(ind, mult)

    def k_red(self, ind, mult, depth):
        if self.rmw(ind, mult, red=True) is None:
            self.ld(ind, mult)

    def k_pred(self, ind, mult, depth):
        """A predicated instruction (under a fresh or earlier predicate)."""
        if not self.th.pred_regs() or self.chance(1, 2):
            self.setp(ind)
        g = f"@{'!' if self.chance(1, 2) else ''}{self.pick(self.th.pred_regs())} "
        what = self.pick(["st", "st", "ld", "atom", "red", "alu", "mov", "selp", "fence"])
        if what == "st":
            if not self.st(ind, mult, g):
                self.ld(ind, mult)
        elif what == "ld":
            if self.ld(ind, mult, g) is None:
                self.ld(ind, mult)
        elif what in ("atom", "red"):
            if not self.room(2 * mult) or self.rmw(ind, mult, g, red=what == "red") is None:
                self.ld(ind, mult)
        elif what == "fence":
            self.fence(ind, mult, g)
        else:
            getattr(self, what)(ind, guard=g)

    def k_dep(self, ind, mult, depth):
        """A load whose value (maybe through arithmetic) is stored: a data dependency."""
        r = self.ld(ind, mult)
        if self.chance(1, 2):
            t = self.th.types[r]
            op = self.pick(["add", "sub", "mul", "xor", "and"]) if t[0] != "b" else \
                self.pick(["xor", "and", "or"])
            if op in ("add", "sub", "mul") and t[0] == "b":
                op = "xor"
            if op in ("xor", "and", "or") and t[0] != "b":
                op = "add"
            d = self.th.fresh(t)
            mn = "mul.lo" if op == "mul" else op
            self.th.emit(f"{mn}.{t} {d}, {r}, {self.pick([r, self.imm(t)])}", ind)
            self.th.defined.add(d)
            r = d
        loc = self.loc_for(True, mult)
        if loc is None or width(loc[1]) != width(self.th.types[r]):
            same = [x for x in self.p.locs if width(x[1]) == width(self.th.types[r])
                    and self.p.writes.get(x[0], 0) + mult <= self.p.max_writes]
            loc = self.pick(same) if same else None
        if loc is not None:
            self.st(ind, mult, src=r, loc=loc)

    def k_if(self, ind, mult, depth):
        """`@%p bra L; <block>; L:` — registers first written inside are not defined after."""
        preds = self.th.pred_regs()
        p = self.pick(preds) if preds and self.chance(1, 3) else self.setp(ind)
        lab = self.label()
        neg = "!" if self.chance(1, 2) else ""
        if self.chance(1, 10):
            self.th.emit(f"bra {lab}", ind)  # unconditional: dead code up to the label
        else:
            self.th.emit(f"@{neg}{p} bra {lab}", ind)
        before = set(self.th.defined)
        self.block(ind + 1, mult, depth + 1, 1, 3)
        self.th.defined = before
        self.th.lines.append("    " * ind + f"{lab}:")

    def k_ret(self, ind, mult, depth):
        p = self.setp(ind)
        self.th.emit(f"@{'!' if self.chance(1, 2) else ''}{p} ret", ind)
        self.th.ends.append(set(self.th.defined))

    def k_loop(self, ind, mult, depth):
        """A counted loop; its body has a side effect, so it is unrolled rather than reduced to an
        await. The bound counts a back edge's iterations along the whole path (enclosing loops
        included): n <= 1 + unroll // mult keeps every path, and now and then n = unroll + 2 runs
        past the bound, so the thread has no complete path at all."""
        n = self.draw(st.integers(1, 1 + self.p.unroll // mult))
        if self.chance(1, 16):
            n = self.p.unroll + 2
        style = self.pick(["up", "down", "up64"])
        t = {"up": "u32", "down": "s32", "up64": "u64"}[style]
        c = self.th.fresh(t)
        self.th.fixed.add(c)
        p = self.th.fresh_pred()
        lab = self.label()
        self.th.emit(f"mov.{t} {c}, {n if style == 'down' else 0}", ind)
        self.th.defined.add(c)
        self.th.lines.append("    " * ind + f"{lab}:")
        m = mult * n
        start = len(self.th.lines)
        self.block(ind + 1, m, depth + 1, 0, 2)
        body = self.th.lines[start:]
        if not any(s.strip().startswith(("st", "atom", "red", "fence", "membar", "@"))
                   for s in body):
            if not self.room(m) or not self.st(ind + 1, m):
                self.fence(ind + 1, m)
        if style == "down":
            self.th.emit(f"sub.s32 {c}, {c}, 1", ind + 1)
            self.th.emit(f"setp.gt.s32 {p}, {c}, 0", ind + 1)
        else:
            self.th.emit(f"add.{t} {c}, {c}, 1", ind + 1)
            cmp = self.pick(["lt", "lo", "ne"])
            self.th.emit(f"setp.{cmp}.{t} {p}, {c}, {n}", ind + 1)
        self.th.defined.add(p)
        self.th.emit(f"@{p} bra {lab}", ind)

    def k_retry(self, ind, mult, depth):
        """A loop whose exit depends on a value read (a CAS lock, an RMW or a load/store loop
        retried while the value read is / is not the initial one): unrolled `unroll` times,
        longer executions cut by the bound."""
        m = mult * (self.p.unroll + 1)
        style = self.pick(["cas", "rmw", "ldst"] if self.room(2 * m) else ["ldst"])
        loc = self.loc_for(True, m, atomic=style != "ldst")
        if loc is None:
            return self.k_await(ind, mult, depth)
        lab = self.label()
        self.th.lines.append("    " * ind + f"{lab}:")
        init = self.p.inits[loc[0]]
        if style == "cas":  # a lock: retry while someone else holds it
            w = width(loc[1])
            sem = self.pick(["", ".acquire.gpu", ".acq_rel.cta", ".relaxed.sys", ".acquire.cluster"])
            d = self.th.fresh(f"b{w}")
            new = self.p.next_value
            self.p.next_value += 1
            self.th.emit(f"atom{sem}{self.space(loc)}.cas.b{w} {d}, [{loc[0]}], "
                         f"{imm_text(init, loc[1])}, {new}", ind + 1)
            self.p.events += 2 * m
            self.p.writes[loc[0]] = self.p.writes.get(loc[0], 0) + m
            self.th.defined.add(d)
            self.th.loaded.add(d)
            cmp = "ne"
        else:
            d = self.rmw(ind + 1, m, loc=loc) if style == "rmw" else self.ld(ind + 1, m, loc=loc)
            if style == "ldst" or self.chance(1, 3):
                self.block(ind + 1, m, depth + 1, 0, 1)
            if style == "ldst" and self.room(m):
                self.st(ind + 1, m)
            cmp = self.pick(["eq", "ne"])
        t = self.th.types[d]
        p = self.th.fresh_pred()
        self.th.emit(f"setp.{cmp}.{t} {p}, {d}, {imm_text(init, t)}", ind + 1)
        self.th.defined.add(p)
        self.th.emit(f"@{p} bra {lab}", ind)

    def k_await(self, ind, mult, depth):
        """A side-effect-free spin loop (one await read) for a value an earlier thread stores;
        a plain load when there is none."""
        waits = [(loc, v) for loc in self.p.locs for t, v in self.p.stored.get(loc[0], [])
                 if t != self.th.index]
        if not waits:
            self.ld(ind, mult)
            return
        loc, v = self.pick(waits)
        lab = self.label()
        self.th.lines.append("    " * ind + f"{lab}:")
        d = self.ld(ind + 1, mult, loc=loc)
        t = self.th.types[d]
        p = self.th.fresh_pred()
        self.th.emit(f"setp.ne.{t} {p}, {d}, {imm_text(v, t)}", ind + 1)
        self.th.defined.add(p)
        self.th.emit(f"@{p} bra {lab}", ind)


@st.composite
def rich_program(draw, max_threads: int = 3, max_events: int = 8, max_instrs: int = 5,  # noqa: C901 (a draw per knob)
                 unroll: int = 1, max_writes: int = 3, max_sc: int = 2, loops: bool = True,
                 branches: bool = True, condition: bool = True, min_threads: int = 1) -> str:
    """A random .ptx program over typed machine integers.

    Size knobs (for the brute-force oracle): ``max_events`` memory events in all after unrolling
    loops ``unroll`` times (an RMW counts 2), ``max_writes`` writes per location, ``max_sc`` SC
    fences, ``max_instrs`` top-level items per thread (an item may be a branch or a loop)."""
    n = draw(st.sampled_from([k for k in (2, 3, 2, 3, 1, 4) if min_threads <= k <= max_threads]))
    k = draw(st.sampled_from([2, 1, 3]))
    locs = draw(st.lists(st.sampled_from(LOC_POOL), min_size=k, max_size=k, unique=True))
    prog = _Prog(sorted(locs), unroll, max_events, max_writes, max_sc)
    lines = []
    if draw(st.booleans()):
        lines.append(f".test RICH \"generated: {n} threads\"")
    for name, t, space in prog.locs:
        init = 0
        if space == "global" and draw(st.integers(0, 3)) == 0:
            init = draw(st.sampled_from(IMMS[width(t)][3:]))  # no small value: stores write those
        prog.inits[name] = init
        lines.append(f".{space} .{t} {name} = {imm_text(init, t)};")
    placement = draw(st.sampled_from(["cta", "cta", "cluster", "gpu"]))
    declare = draw(st.booleans())
    threads: list[_Thread] = []
    for i in range(n):
        th = _Thread(i)
        g = _Gen(draw, prog, th, loops, branches)
        g.block(1, 1, 0, min(2, max_instrs), max_instrs)
        if not any(s.strip().startswith(("ld", "st", "atom", "red", "@")) for s in th.lines) \
                and prog.events < max_events:
            g.ld(1, 1)
        th.ends.append(set(th.defined))
        threads.append(th)
        cta = draw(st.integers(0, 1))
        place = f".cta {cta}"
        if placement == "cluster":
            place = f".cluster {draw(st.integers(0, 1))} .cta {cta}"
        elif placement == "gpu":
            place = f".gpu {draw(st.integers(0, 1))} .cta {cta}"
        body = []
        if declare:
            by_type: dict[str, list[str]] = {}
            for r, t in th.types.items():
                by_type.setdefault(t, []).append(r)
            for t in sorted(by_type):
                body.append(f"    .reg .{t} {', '.join(sorted(by_type[t]))};")
        lines.append(f".thread T{i} {place} {{\n" + "\n".join(body + th.lines) + "\n}")
    refs: list[tuple[str, str]] = []  # what a condition may name: (reference text, type)
    for th in threads:
        final = set.intersection(*th.ends)
        refs += [(f"T{th.index}:{r}", th.types[r]) for r in sorted(final) if th.types[r] != "pred"]
    refs += [(name, t) for name, t, space in prog.locs if space == "global"]
    if condition and refs and draw(st.integers(0, 3)) > 0:
        atoms = []
        for _ in range(draw(st.integers(1, 3))):
            ref, t = draw(st.sampled_from(refs))
            v = draw(st.sampled_from(sorted(prog.values) + [0xFFFFFFFF, -1]))
            op = draw(st.sampled_from(["==", "==", "==", "!="]))
            atoms.append(f"{ref} {op} {print_value(v, t)}")
        expr = atoms[0]
        for a in atoms[1:]:
            expr = f"{expr} {draw(st.sampled_from(['&&', '&&', '||']))} {a}"
        if draw(st.integers(0, 5)) == 0:
            expr = f"!({expr})"
        quant = draw(st.sampled_from(["exists", "exists", "~exists", "forall"]))
        lines.append(f"{quant} ({expr})")
    return "\n".join(lines) + "\n"

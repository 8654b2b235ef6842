"""The semantic check pass, run by both front ends (``.ptx`` and ``.litmus``) between parsing and
event building. A typo must never change a verdict: every name resolves, every value fits its
type, every register is written before it is read, and what is wrong is reported at its own
file:line:col with a hint (a did-you-mean from the program's own names where one is close).

Errors (SemanticError unless noted):

- the program: at least one thread, at most :data:`MAX_THREADS` threads and
  :data:`MAX_INSTRS` instructions per thread; thread and location names unique; alias targets
  declared, no alias cycles;
- a thread: labels unique, branch targets are labels, location operands declared, no address
  offsets (UnsupportedError), each access as wide as the location it names (mixed-size accesses
  are outside the model), alias declarations as wide as their target;
- registers: a register read on some path before any write (PTX registers are undefined until
  written). A predicated write may not run, so it defines its register only when the same
  predicate, unchanged, guards writes of both polarities (``@%p mov %r, 1; @!%p mov %r, 2;``).
  Initial values: ``.reg .u32 %r1 = 5;`` in a ``.ptx`` thread, ``P0:r1 = 5;`` in a ``.litmus``
  init block;
- the condition: every location and thread it names exists, every register it names is written
  by its thread (or initialised), every constant fits the type it is compared with; nesting at
  most :data:`MAX_DEPTH` deep;
- literals: a location's or register's initial value fits its type (``.u32``: 0..0xFFFFFFFF,
  ``.s32``: -2^31..2^31-1, ``.b32`` either); an integer constant in an instruction is at most 64
  bits (ptxas's "Constant overflow"), and in a ``.ptx`` test it fits its operand's type read
  signed or unsigned (ptxas would truncate it without a word; see :func:`check_operands`);
- operands of a ``.ptx`` test, as ``ptxas -arch=sm_90`` checks them (:func:`check_operands`):
  the instruction types each opcode takes, register types (a ``.pred`` guard; sizes and kinds by
  the ISA's operand-type rules), addresses as values only in a 64-bit ``mov``, the state space of
  ``[x]`` the one x is declared in.

Warnings (``Program.warnings``, not fatal): code no path reaches (after an unconditional ``bra``
or ``ret`` with no label a branch targets), and a register the condition names that its thread
writes only on some paths (on the others the condition reads it as 0)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field, replace

from .._infra.larkrt import Token, Tree
from .._infra.records import record
from ..errors import Diagnostic, ParseError, SemanticError, SourcePos, UnsupportedError
from ..ir.program import (
    MEMORY_INSTRS,
    Addr,
    Alu,
    AsyncStore,
    Atom,
    Barrier,
    Branch,
    BulkCopy,
    Cmp,
    Elect,
    Imm,
    Instruction,
    Label,
    Load,
    Location,
    Mapa,
    MBarrier,
    MemRef,
    Mov,
    Program,
    Red,
    Reg,
    RegRef,
    Ret,
    Selp,
    Setp,
    Store,
    Sym,
    TensorCopy,
    TensorMapReplace,
    Thread,
    Wgmma,
    cond_refs,
    operands,
    type_width,
)
from .ptx_isa import ATOM_TYPES, INSTR_TYPES, SETP_TYPES, register_fits

MAX_THREADS = 64
MAX_INSTRS = 50_000  # per thread, labels included
MAX_DEPTH = 100  # operators (!, &&, ||) nested in a condition
MAX_REG_RANGE = 65_536  # registers one `.reg .u32 %r<n>` declares


@record(frozen=False)
class Sources:
    """What the IR does not keep and the located messages need: where each name of the condition
    first appears, each constant of the condition with the name it is compared with, and the
    registers an instruction reads that its IR form drops (texture/surface coordinates)."""

    refs: dict = field(default_factory=dict)  # RegRef | MemRef -> SourcePos
    consts: list = field(default_factory=list)  # (RegRef | MemRef, int, SourcePos)
    extra_reads: dict = field(default_factory=dict)  # id(instruction) -> [Reg]
    spots: dict = field(default_factory=dict)  # id(instruction) -> [(operand, SourcePos)]
    dialect: str = "ptx"  # "ptx" | "litmus": how hints spell registers and initial values


def did_you_mean(word: str, options: Iterable[str], prefix: str = "",
                 synonyms: Mapping[str, str] | None = None) -> str:
    """``"did you mean `x`? "`` for the closest of ``options``, or ``""``; a closest word of
    ``synonyms`` is suggested as what it stands for (``store`` as ``st``)."""
    synonyms = synonyms or {}
    close = difflib.get_close_matches(word, sorted({*options, *synonyms}), n=3, cutoff=0.6)
    if not close:
        return ""
    best = next((c for c in close if c.startswith(word)), close[0])  # .ad: .add before .and
    return f"did you mean `{prefix}{synonyms.get(best, best)}`? "


# ----- limits ---------------------------------------------------------------------------------------


def check_thread_count(n: int, pos: SourcePos | None) -> None:
    if n > MAX_THREADS:
        raise SemanticError(f"the test has {n} threads, more than the limit of {MAX_THREADS}", pos,
                            "litmus tests are small: split it into tests of a few threads each")


def check_instr_count(n: int, thread: str, pos: SourcePos | None) -> None:
    if n > MAX_INSTRS:
        raise SemanticError(f"thread {thread} has {n} instructions, more than the limit of "
                            f"{MAX_INSTRS}", pos,
                            "litmus tests are small: express repetition with a loop (a label and "
                            "bra) and --unroll")


def check_depth(tree: Tree, file: str, ops: tuple[str, ...] = ("c_or", "c_and", "c_not"),
                parens: bool = False) -> None:
    """A condition's operators nest at most MAX_DEPTH deep (checked without recursion, before
    anything recursive walks the tree). In a tree that keeps parentheses (``parens``: ``c_paren``,
    the .ptx grammar), a pair of parentheses is one level and a ``c_or``/``c_and`` of one operand (the
    grammar's wrapper of every parenthesised expression) none; the error points at the first
    operator or parenthesis beyond the limit."""
    stack = [(tree, 0)]
    while stack:
        t, d = stack.pop()
        if not isinstance(t, Tree):
            continue
        what = _nesting(t, ops, parens)
        if what:
            d += 1
            if d > MAX_DEPTH:
                _too_deep(t, what, file)
        stack += [(c, d) for c in t.children]


def _nesting(t: Tree, ops: tuple[str, ...], parens: bool) -> str:
    """"parentheses", "operators", or "" for a node that does not nest."""
    if t.data == "c_paren":
        return "parentheses"
    if t.data not in ops:
        return ""
    if parens and t.data != "c_not" and sum(isinstance(c, Tree) for c in t.children) < 2:
        return ""
    return "operators"


def _too_deep(t: Tree, what: str, file: str) -> None:
    tok = _first_token(t)
    pos = SourcePos(file, tok.line, tok.column) if tok is not None else None
    hint = ("drop the redundant parentheses: (e) is e" if what == "parentheses" else
            "write it flatter: !!e is e, and a chain of && or || needs no parentheses")
    raise SemanticError(f"the condition nests {what} more than {MAX_DEPTH} deep", pos, hint)


def _first_token(t: Tree) -> Token | None:
    while isinstance(t, Tree):
        if not t.children:
            return None
        t = t.children[0]
    return t if isinstance(t, Token) else None


# ----- literals -------------------------------------------------------------------------------------


def type_range(ty: str) -> tuple[int, int]:
    """The integers a PTX type holds: .u from 0, .s two's complement, .b (and .f, as bits) either
    reading, .pred 0 and 1."""
    w = type_width(ty)
    if ty == "pred":
        return 0, 1
    if ty.startswith("u"):
        return 0, (1 << w) - 1
    if ty.startswith("s"):
        return -(1 << (w - 1)), (1 << (w - 1)) - 1
    return -(1 << (w - 1)), (1 << w) - 1


def _range_hint(ty: str) -> str:
    lo, hi = type_range(ty)
    w = type_width(ty)
    if ty.startswith("u"):
        return (f"a .{ty} holds 0..{hi} (0x{hi:X}); write 0x{hi:X} for all ones, or declare "
                f".s{w} for negative values")
    if ty.startswith("s"):
        return f"a .{ty} holds {lo}..{hi}; declare .u{w} for values up to {(1 << w) - 1}"
    if ty == "pred":
        return "a .pred holds 0 or 1"
    return f"a .{ty} holds {w} bits: {lo}..{hi}"


def check_init_value(value: int, ty: str, what: str, pos: SourcePos | None) -> None:
    """An initial value (of a location or a register) must fit its declared type."""
    lo, hi = type_range(ty)
    if not lo <= value <= hi:
        raise SemanticError(f"{value} does not fit {what} (.{ty})", pos, _range_hint(ty))


IMM_LIMIT = 1 << 64


def check_immediate(value: int, pos: SourcePos | None) -> None:
    """An integer constant in an instruction fits in 64 bits (a larger one is ptxas's "Constant
    overflow"); in a .ptx test, :func:`check_operands` then asks it to fit its operand's type."""
    if abs(value) >= IMM_LIMIT:
        raise ParseError(f"integer constant {value} overflows 64 bits", pos,
                         "PTX integer constants are 64-bit: at most 0xFFFFFFFFFFFFFFFF")


# ----- operands, as ptxas checks them (the .ptx front end) -----------------------------------------
# Instruction types, register types (PTX ISA "Operand Type Information"), integer constants,
# addresses as values and state spaces: ptxas -arch=sm_90 rejects what these reject (the tables
# are in ptx_isa.py; tests/test_ptxas_diff.py compares with ptxas). Registers without a `.reg`
# declaration (a litmus convenience) take the type of the instruction that uses them. One
# departure: ptxas truncates an integer constant too large for its operand without a word
# (`mov.u32 %r0, 0x1FFFFFFFF`); here it is an error, since the truncated value is not the one
# the test's author wrote.

_BIT_MOVES = (Mov, Selp, Load, Store)  # the instructions that move floating-point bits unchanged
_NTH = ("source", "first source", "second source", "third source")


def check_operands(p: Program, src: Sources) -> None:
    """Raise the first operand error (or unmodelled operand form) of a .ptx program."""
    locs = {loc.name: loc for loc in p.locations}
    for t in p.threads:
        types = {name: (ty, None) for name, ty in t.reg_types}
        for ins in t.instrs:
            dst = getattr(ins, "dst", None)
            if isinstance(dst, Reg) and dst.name not in types:
                types[dst.name] = ("pred" if isinstance(ins, Setp) else getattr(ins, "type", ""),
                                   ins)
        for ins in t.instrs:
            _Operands(ins, types, locs, src.spots.get(id(ins), [])).run()


def _declared(reg: str, ty: str, writer: Instruction | None) -> str:
    """How a register got its type, for a message."""
    if writer is None:
        return f"{reg} is a .{ty} register"
    return f"{reg} holds a .{ty} (`{writer.text}`, line {_line(writer.pos)}, writes it)"


_GUARDED = re.compile(r"\s*(?:@\s*!?\s*%[\w$]+\s*)?([^\s,;]+)")


def _mnemonic(ins: Instruction) -> str:
    """The instruction's mnemonic as written (without its guard)."""
    m = _GUARDED.match(ins.text)
    return m.group(1) if m else ins.text


def _slots(ins: Instruction) -> tuple[tuple[str, ...] | None, list] | None:
    """The instruction types ``ins`` may have, and its operands in source order, a memory operand
    as None: (operand, the type it is read or written at, whether ld/st's relaxed size rule
    applies, what it is). None: not checked here."""
    match ins:
        case Mov():
            return INSTR_TYPES["mov"], [(ins.dst, ins.type, False, "destination"),
                                        (ins.src, ins.type, False, "source")]
        case Alu():
            shift = ins.op in ("shl", "shr")
            srcs = [(o, "u32" if shift and k == 1 else ins.type, False,
                     "shift amount" if shift and k == 1 else _NTH[k + 1])
                    for k, o in enumerate(ins.srcs)]
            return INSTR_TYPES[ins.op], [(ins.dst, ins.type, False, "destination"), *srcs]
        case Setp():
            return SETP_TYPES[ins.cmp], [(ins.dst, "pred", False, "destination"),
                                         (ins.a, ins.type, False, "first source"),
                                         (ins.b, ins.type, False, "second source")]
        case Selp():
            return INSTR_TYPES["selp"], [(ins.dst, ins.type, False, "destination"),
                                         (ins.a, ins.type, False, "first source"),
                                         (ins.b, ins.type, False, "second source"),
                                         (ins.p, "pred", False, "selector")]
    if isinstance(ins, MBarrier):
        return None, _mbar_slots(ins)
    if isinstance(ins, (Wgmma, Elect)):
        return None, _async_slots(ins)
    if isinstance(ins, Mapa):
        return None, [(ins.dst, ins.type, False, "destination"), (ins.src, ins.type, False, "address"),
                      (ins.rank, "u32", False, "rank")]
    if isinstance(ins, Barrier):  # untyped: its operands are .u32
        return None, [(o, "u32", False, "barrier" if k == 0 else "thread count")
                      for k, o in enumerate((*ins.ids, ins.count)) if o is not None]
    if isinstance(ins, (AsyncStore, BulkCopy, TensorCopy, TensorMapReplace)):
        return _copy_slots(ins)
    if not isinstance(ins, MEMORY_INSTRS) or ins.proxy != "generic":
        return None
    return _memory_slots(ins)


# st.async's types and red.async's per operation, in their modelled 32-bit forms (ptxas: "Incorrect
# type '.u32' for operation '.and' in instruction 'red.async'")
_ASYNC_STORE_TYPES = {"st": ("b32", "u32", "s32"), "add": ("u32", "s32"), "min": ("u32", "s32"),
                      "max": ("u32", "s32"), "inc": ("u32",), "dec": ("u32",), "and": ("b32",),
                      "or": ("b32",), "xor": ("b32",)}


def _copy_slots(ins: AsyncStore | BulkCopy | TensorCopy | TensorMapReplace
                ) -> tuple[tuple[str, ...] | None, list]:
    """st.async/red.async's value at the instruction's type; a tensor copy's coordinates, .b32
    (ptxas: "Incompatible elements of vector expression" for other widths); tensormap.replace's
    new global address, a 64-bit register or constant (ptxas: "must be register" for a name); a
    multicast copy's 16-bit ctaMask."""
    mem = (None, "", False, "address")
    if isinstance(ins, AsyncStore):
        return _ASYNC_STORE_TYPES[ins.op or "st"], [mem, (ins.src, ins.type, False, "source"), mem]
    if isinstance(ins, TensorMapReplace):
        return None, [mem, (ins.src, "b64", False, "new global address")]
    mask = [(ins.multicast, "b16", False, "ctaMask")] if ins.multicast is not None else []
    if isinstance(ins, BulkCopy):
        return None, mask
    return None, [*((x, "b32", False, f"coordinate {k}") for k, x in enumerate(ins.coords)), *mask]


def _async_slots(ins: Wgmma | Elect) -> list:
    """wgmma.mma_async's 64-bit descriptors, 32-bit accumulators and predicate scale-d (ptxas:
    "Arguments mismatch" otherwise); elect.sync's predicate and 32-bit membermask."""
    if isinstance(ins, Elect):
        return [(ins.dst, "pred", False, "predicate destination"), (ins.mask, "b32", False, "membermask")]
    if ins.kind != "mma":
        return []
    scale = [(ins.scale_d, "pred", False, "scale-d")] if isinstance(ins.scale_d, Reg) else []
    return [*[(r, "b32", False, "accumulator") for r in ins.accs], (ins.a, "b64", False, "A descriptor"),
            (ins.b, "b64", False, "B descriptor"), *scale]


def _mbar_slots(ins: MBarrier) -> list:
    """The operands of an mbarrier instruction in source order (the object's address as None);
    the state is a 64-bit integer (ptxas: no .f64 register)."""
    mem = (None, "", False, "address")
    if ins.op == "init":
        return [mem, (ins.count, "u32", False, "expected count")]
    if ins.op in ("expect_tx", "complete_tx"):
        return [mem, (ins.tx, "u32", False, "transaction count")]
    if ins.op in ("arrive", "arrive_drop"):
        n = ins.tx if ins.tx is not None else ins.count
        return [(ins.dst, "u64", False, "state"), mem, *([(n, "u32", False, "count")] if n else [])]
    return [(ins.dst, "pred", False, "destination"), mem,
            (ins.state, "u32", False, "phase parity") if ins.parity else (ins.state, "u64", False, "state")]


def _memory_slots(ins: Instruction) -> tuple[tuple[str, ...], list] | None:
    mem = (None, "", False, "address")
    match ins:
        case Load():
            return INSTR_TYPES["ld"], [(ins.dst, ins.type, True, "destination"), mem]
        case Store():
            return INSTR_TYPES["st"], [mem, (ins.src, ins.type, True, "source")]
        case Atom():
            return ATOM_TYPES[ins.op], [(ins.dst, ins.type, False, "destination"), mem,
                                        *[(o, ins.type, False, _NTH[k + 1])
                                          for k, o in enumerate(ins.srcs)]]
        case Red():
            return ATOM_TYPES[ins.op], [mem, (ins.src, ins.type, False, "source")]
    return None


def _takes(ty: str) -> str:
    """The registers an operand of type ``ty`` takes, in words."""
    w = type_width(ty)
    if ty == "pred":
        return "a .pred register"
    if ty[0] == "b":
        return f"a {w}-bit register (.b{w}, .u{w}, .s{w}" + (f", .f{w})" if w >= 32 else ")")
    if ty[0] == "f":
        return f"an .f{w} or .b{w} register"
    return f"a .u{w}, .s{w} or .b{w} register"


@record(frozen=False)
class _Operands:
    """The operand checks of one instruction."""

    ins: Instruction
    types: dict[str, tuple[str, Instruction | None]]  # register → type, the write that gave it
    locs: dict[str, Location]
    spots: list
    index: int | None = None  # the operand being checked, in source order

    def at(self, op: object, index: int | None = None) -> SourcePos | None:
        """Where operand ``op`` (the ``index``-th in source order, if known) is written."""
        if index is not None and index < len(self.spots) and self.spots[index][0] == op:
            return self.spots[index][1]
        return next((pos for o, pos in self.spots if o == op), self.ins.pos)

    def run(self) -> None:
        self.guard()
        found = _slots(self.ins)
        if found is None:
            return
        allowed, slots = found
        ty = getattr(self.ins, "type", "")
        mn = _mnemonic(self.ins)
        if allowed is not None and ty not in allowed:
            raise SemanticError(f"`{mn}` does not take the type .{ty}", self.ins.pos,
                                f"`{mn.rsplit('.', 1)[0]}` takes "
                                + " ".join("." + t for t in allowed))
        if ty[:1] == "f" and not isinstance(self.ins, _BIT_MOVES):
            raise UnsupportedError(f"floating-point `{mn}`", self.ins.pos,
                                   "ptxmm models integer values: floating-point arithmetic, "
                                   "comparisons and atomics are not modelled yet")
        for k, (op, slot, relaxed, what) in enumerate(slots):
            self.index = k
            if isinstance(op, Reg):
                self.register(op, slot, relaxed, what, mn)
            elif isinstance(op, Imm):
                self.constant(op, slot, what, mn)
            elif isinstance(op, Sym) and op.name in self.locs:
                self.address(op, slot, what, mn)
        self.space()
        if isinstance(self.ins, Barrier):
            self.barrier(mn)
        if isinstance(self.ins, MBarrier):
            self.mbarrier_constants(self.ins, mn)

    def mbarrier_constants(self, ins: MBarrier, mn: str) -> None:
        """ptxas: a phase parity is 0 or 1, an arrival count positive."""
        if ins.parity and isinstance(ins.state, Imm) and ins.state.value not in (0, 1):
            raise SemanticError(f"phase parity {ins.state.value} of `{mn}`", self.at(ins.state, 2),
                                "a phase parity is 0 or 1")
        if ins.op.startswith("arrive") and isinstance(ins.count, Imm) and ins.count.value <= 0:
            raise SemanticError(f"arrival count {ins.count.value} of `{mn}`", self.at(ins.count, 2),
                                "an arrive counts at least one arrival: 1 or more")

    def barrier(self, mn: str) -> None:
        """ptxas: a barrier number is 0..15. (Its thread count must also be a multiple of the warp
        size, but a litmus test counts its own threads there: `bar.sync 0, 2` is two threads.)"""
        ident = self.ins.ids[0]
        if isinstance(ident, Imm) and not 0 <= ident.value <= 15:
            raise SemanticError(f"barrier {ident.value} of `{mn}` out of range", self.at(ident, 0),
                                "a CTA has 16 barriers: 0..15")

    def guard(self) -> None:
        if self.ins.guard is None:
            return
        r = self.ins.guard[0]
        rt, writer = self.types.get(r.name, ("pred", None))
        if rt != "pred":
            cmp = f"setp.ne.{rt} %p0, {r.name}, 0;" if rt[:1] in ("u", "s", "b") else "setp"
            raise SemanticError(f"the guard {r.name} is not a .pred: {_declared(r.name, rt, writer)}",
                                self.at(r),
                                f"a guard is a predicate: set one with `{cmp}` and write `@%p0`")

    def register(self, r: Reg, slot: str, relaxed: bool, what: str, mn: str) -> None:
        rt, writer = self.types.get(r.name, ("", None))
        if writer is not None and writer is not self.ins and (rt == "pred") != (slot == "pred"):
            raise SemanticError(  # an undeclared register: only predicate or not is known
                f"{_declared(r.name, rt, writer)}; the {what} of `{mn}` is a .{slot}", self.at(r, self.index),
                f"it takes {_takes(slot)}: use another register")
        if writer is not None or not rt:
            return
        if not register_fits(slot, rt, relaxed):
            raise SemanticError(
                f"{r.name} is a .{rt} register; the {what} of `{mn}` is a .{slot}", self.at(r, self.index),
                f"it takes {_takes(slot)}" + (" (or a wider integer one)" if relaxed else "")
                + f": declare {r.name} `.reg .{slot}`, or use a register of that type")
        if type_width(rt) > type_width(slot):
            raise UnsupportedError(
                f"{r.name} (.{rt}) as the {what} of the {type_width(slot)}-bit access `{mn}`",
                self.at(r, self.index), "ptxas extends a loaded value to the register's width (or stores its "
                "low bits); ptxmm does not model that yet: use a register as wide as the access")

    def constant(self, c: Imm, slot: str, what: str, mn: str) -> None:
        if slot[0] == "f":
            raise SemanticError(f"the integer constant {c.value} as the .{slot} {what} of `{mn}`",
                                self.at(c, self.index), "a floating-point operand takes a floating-point "
                                "constant (0f3F800000), which ptxmm does not model yet")
        if slot == "pred" and isinstance(self.ins, Selp) and c.value in (0, 1):
            raise UnsupportedError(f"the constant selector {c.value} of `{mn}`", self.at(c, self.index),
                                   "write the operand it selects: selp with a constant "
                                   "selector is a mov")
        lo, hi = (0, 1) if slot == "pred" else (-(1 << (type_width(slot) - 1)),
                                                (1 << type_width(slot)) - 1)
        if not lo <= c.value <= hi:
            w = type_width(slot)
            cut = c.value % (1 << w)
            raise SemanticError(
                f"{c.value}{f' (0x{c.value:X})' if c.value > 9 else ''} does not fit the .{slot} "
                f"{what} of `{mn}`", self.at(c, self.index),
                (f"a {w}-bit constant is {lo}..{hi} (read signed or unsigned); ptxas would truncate it "
                 f"to {cut} (0x{cut:X}) without a word: write that if it is what you mean")
                if slot != "pred" else "a .pred constant is 0 or 1")

    def address(self, s: Sym, slot: str, what: str, mn: str) -> None:
        loc = self.locs[s.name]
        if isinstance(self.ins, Mapa) and what == "address":
            if loc.space != "shared":
                raise SemanticError(f"mapa maps a .shared address: {s.name} is not a .shared "
                                    f"location (it is .{loc.space})", self.at(s, self.index),
                                    "map a .shared location to the other CTA's copy")
            return
        if not isinstance(self.ins, Mov):  # ptxas: "must be register"
            raise SemanticError(f"the address of {s.name} as the {what} of `{mn}`", self.at(s, self.index),
                                f"ptxas takes an address only in mov: `mov.u64 %rd0, {s.name};`, "
                                "then use %rd0")
        w = type_width(slot)
        if slot[0] in "usb" and w == 64:
            return
        # ptxas: no address in a .f or .pred mov, nor a 32-bit .global one ("32-Bit addressing is
        # not supported on sm_90"); a 16-bit one, and a 32-bit .shared one, it truncates
        if slot[0] not in "usb" or (w == 32 and loc.space == "global"):
            raise SemanticError(f"the address of .{loc.space} location {s.name} in a .{slot}",
                                self.at(s, self.index),
                                f"an address has 64 bits: `mov.u64 %rd0, {s.name};`")
        raise UnsupportedError(f"the {w}-bit address of .{loc.space} location {s.name}",
                               self.at(s, self.index),
                               f"take the 64-bit address: `mov.u64 %rd0, {s.name};`")

    def space(self) -> None:
        """``[x]`` in the state space x is declared in; ``[%r]`` through an integer register of
        64 bits (32 will do for .shared)."""
        ins = self.ins
        if isinstance(ins, MBarrier):
            self.mbarrier_object(ins)
            return
        if not isinstance(ins, MEMORY_INSTRS) or ins.proxy != "generic":
            return
        if isinstance(ins.addr.base, Reg):
            self.address_register(ins.addr.base, ins.space)
            return
        if ins.space is None or not isinstance(ins.addr.base, Sym):
            return
        loc = self.locs.get(ins.addr.base.name)
        if loc is not None and loc.space != ins.space:
            raise SemanticError(
                f"`{_mnemonic(ins)}` accesses {loc.name}, a .{loc.space} location, in the "
                f".{ins.space} state space", self.at(ins.addr.base),
                f"write .{loc.space} (or no state space: a generic access), or access a "
                f".{ins.space} location")


    def mbarrier_object(self, ins: MBarrier) -> None:
        base = ins.addr.base
        loc = self.locs.get(base.name) if isinstance(base, Sym) else None
        if loc is not None and loc.space != "shared":
            raise SemanticError(f"`{_mnemonic(ins)}` on {loc.name}, a .{loc.space} location",
                                self.at(base), "an mbarrier object lives in shared memory: "
                                f"declare it `.shared .b64 {loc.name}`")
        if isinstance(base, Reg):
            self.address_register(base, "shared")

    def address_register(self, r: Reg, space: str | None) -> None:
        rt, writer = self.types.get(r.name, ("", None))
        mn, where = _mnemonic(self.ins), self.at(getattr(self.ins, "addr", r))
        if rt in ("pred", "f16", "f32", "f64"):
            raise SemanticError(f"{_declared(r.name, rt, writer)}, not an address: the address of "
                                f"`{mn}`", where, "an address register is a .u64 (or .b64, .s64)")
        if writer is not None or not rt or type_width(rt) == 64:
            return
        if type_width(rt) == 32 and space == "shared":
            return
        if type_width(rt) == 32:
            raise SemanticError(f"{r.name} is a 32-bit register: the address of `{mn}`", where,
                                "sm_90 addresses .global (and generic) memory with 64 bits: use "
                                "a .u64 register")
        raise UnsupportedError(f"the {type_width(rt)}-bit address {r.name} of `{mn}`", where,
                               "use a .u64 address register")


# ----- the pass -------------------------------------------------------------------------------------


def check(p: Program, src: Sources | None = None,
          front_end: Callable[[Program], None] | None = None) -> Program:
    """Check ``p`` (raising the first error in source order) and return it with its warnings.
    ``front_end`` runs the front end's own checks once names resolve, before the register
    checks (so that its more specific messages win)."""
    src = src or Sources()
    if not p.threads:
        raise SemanticError("the test has no threads", SourcePos(p.file, 1, 1),
                            "add a `.thread T0 { ... }` block" if src.dialect == "ptx" else
                            "add a thread column: P0@cta 0,gpu 0 ;")
    check_thread_count(len(p.threads), p.threads[-1].pos)
    seen: dict[str, Thread] = {}
    for t in p.threads:
        if t.name in seen:
            raise SemanticError(f"thread {t.name} is defined twice", t.pos,
                                f"first defined at line {_line(seen[t.name].pos)}; give each "
                                "thread its own name")
        seen[t.name] = t
        check_instr_count(len(t.instrs), t.name, t.pos)
    locs = _check_locations(p)
    unsupported = _check_threads(p, locs)
    if p.condition is not None:
        _check_condition_names(p, locs, src)
    if front_end is not None:
        front_end(p)
    if unsupported is not None:
        raise unsupported
    warnings: list[Diagnostic] = []
    for t in p.threads:
        warnings += _Flow(t, src).run()
    if p.condition is not None:
        warnings += _check_condition_registers(p, src)
    return replace(p, warnings=tuple(p.warnings) + tuple(warnings))


def _check_threads(p: Program, locs: dict[str, Location]) -> UnsupportedError | None:
    """Check each thread; the first "not supported yet" is returned, not raised, so that an
    error the front end finds (a program that is wrong, not only unmodelled) is the one reported."""
    first = None
    for t in p.threads:
        try:
            _check_thread(t, locs)
        except UnsupportedError as e:
            first = first or e
    return first


def _line(pos: SourcePos | None) -> str:
    return str(pos.line) if pos else "?"


def _check_locations(p: Program) -> dict[str, Location]:
    locs: dict[str, Location] = {}
    for loc in p.locations:
        if loc.name in locs:
            raise SemanticError(f"location {loc.name} is declared twice", loc.pos,
                                f"first declared at line {_line(locs[loc.name].pos)}")
        locs[loc.name] = loc
    for loc in p.locations:
        if loc.alias_of is None:
            continue
        tgt = locs.get(loc.alias_of)
        if tgt is None:
            raise SemanticError(f"{loc.name} aliases unknown location {loc.alias_of}", loc.pos,
                                did_you_mean(loc.alias_of, locs) + "declare the data location "
                                "before the alias")
        seen = [loc.name]
        while tgt is not None and tgt.alias_of is not None:
            if tgt.name in seen:
                raise SemanticError(f"alias declarations form a cycle: {' -> '.join(seen)}"
                                    f" -> {tgt.name}", loc.pos, "one location must be declared"
                                    " with a value, not as an alias")
            seen.append(tgt.name)
            tgt = locs.get(tgt.alias_of)
        if tgt is not None and type_width(tgt.type) != type_width(loc.type):
            raise SemanticError(f"{loc.name} (.{loc.type}) aliases {tgt.name} (.{tgt.type}), "
                                "a location of another width", loc.pos,
                                "mixed-size accesses are outside the memory model: declare the "
                                f"alias as .{tgt.type}")
    return locs


def _check_thread(t: Thread, locs: dict[str, Location]) -> None:
    """Labels are unique, branch targets are labels, location names are declared, accesses are
    as wide as their location, no address offsets."""
    labels: dict[str, Label] = {}
    for ins in t.instrs:
        if isinstance(ins, Label):
            if ins.name in labels:
                raise SemanticError(f"label {ins.name} is defined twice in thread {t.name}",
                                    ins.pos, f"first defined at line {_line(labels[ins.name].pos)};"
                                    " a branch needs one target: rename one of them")
            labels[ins.name] = ins
    for ins in t.instrs:
        if isinstance(ins, Branch) and ins.target not in labels:
            raise SemanticError(f"unknown label {ins.target}", ins.pos,
                                did_you_mean(ins.target, labels) + f"labels of thread {t.name}: "
                                + (", ".join(sorted(labels)) or "none"))
        for o in operands(ins):
            base = o.base if isinstance(o, Addr) else o
            if isinstance(base, Sym) and base.name not in locs and base.name not in labels:
                raise SemanticError(f"unknown location {base.name}", ins.pos,
                                    did_you_mean(base.name, locs) + "declare it, e.g. "
                                    f"`.global .u32 {base.name} = 0;`")
        if isinstance(ins, MEMORY_INSTRS):
            _check_access(ins, locs)


def _check_access(ins, locs: dict[str, Location]) -> None:
    if ins.addr.offset != 0:
        raise UnsupportedError(f"address offset {ins.addr.offset:+d}", ins.pos,
                               "each location is one word: declare a separate location for each word")
    if not isinstance(ins.addr.base, Sym):
        return
    loc = locs[ins.addr.base.name]
    if type_width(loc.type) != type_width(ins.type):
        w = type_width(loc.type)
        raise UnsupportedError(
            f"`{ins.text}` accesses {loc.name} with {type_width(ins.type)} bits, but {loc.name} "
            f"is a .{loc.type} ({w} bits)", ins.pos,
            f"mixed-size accesses are outside the memory model: access {loc.name} as "
            f".{ins.type[0] if ins.type[0] in 'usb' else 'b'}{w}, or declare it "
            f"`.{loc.space} .{ins.type} {loc.name}`")


# ----- the condition ----------------------------------------------------------------------------------


def _thread_of(p: Program, name: str) -> Thread | None:
    t = p.thread(name)
    if t is None and name.isdigit() and int(name) < len(p.threads):
        t = p.threads[int(name)]
    return t


def _check_condition_names(p: Program, locs: dict[str, Location], src: Sources) -> None:
    assert p.condition is not None
    for r in cond_refs(p.condition.expr):
        pos = src.refs.get(r)
        if isinstance(r, MemRef) and r.loc not in locs:
            raise SemanticError(f"the condition names unknown location {r.loc}", pos,
                                did_you_mean(r.loc, locs) + "declare it, or name a register as "
                                + ("THREAD:%reg" if src.dialect == "ptx" else "P0:r0"))
        if isinstance(r, RegRef) and _thread_of(p, r.thread) is None:
            names = [t.name for t in p.threads]
            raise SemanticError(f"the condition names unknown thread {r.thread}", pos,
                                did_you_mean(r.thread, names) + f"threads: {', '.join(names)}")


def _written(t: Thread) -> dict[str, list[Instruction]]:
    """Each register the thread writes (or initialises) → the instructions that write it."""
    out: dict[str, list[Instruction]] = {name: [] for name, _ in t.init_regs}
    for ins in t.instrs:
        dst = getattr(ins, "dst", None)
        if isinstance(dst, Reg):
            out.setdefault(dst.name, []).append(ins)
    return out


def _check_condition_registers(p: Program, src: Sources) -> list[Diagnostic]:
    """Registers named by the condition are written by their thread; constants fit the type of
    what they are compared with. A register written on some paths only is a warning."""
    assert p.condition is not None
    warnings = []
    flows = {t.name: _Flow(t, src) for t in p.threads}
    for r in dict.fromkeys(cond_refs(p.condition.expr)):
        if not isinstance(r, RegRef):
            continue
        t = _thread_of(p, r.thread)
        assert t is not None
        written = _written(t)
        if r.reg not in written:
            raise SemanticError(
                f"the condition names {r.thread}:{r.reg}, which thread {t.name} never writes",
                src.refs.get(r), did_you_mean(r.reg, written) + "a register has a final value "
                "only once its thread writes it" + (f"; {t.name} writes "
                + ", ".join(sorted(written)) if written else f"; {t.name} writes no register"))
        if not flows[t.name].defined_at_exit(r.reg):
            warnings.append(Diagnostic(
                f"{r.thread}:{r.reg} is not written on every path of thread {t.name}",
                src.refs.get(r), "where it is not written, the condition reads it as 0"))
    _check_condition_constants(p, src)
    return warnings


def _ref_type(p: Program, r) -> str:
    if isinstance(r, MemRef):
        loc = p.location(r.loc)
        return loc.type if loc is not None else "u32"
    t = _thread_of(p, r.thread)
    types = dict(t.reg_types) if t is not None else {}
    if r.reg in types:
        return types[r.reg]
    for ins in reversed(t.instrs if t is not None else ()):
        dst = getattr(ins, "dst", None)
        if isinstance(dst, Reg) and dst.name == r.reg:
            return "pred" if type(ins).__name__ == "Setp" else ins.type
    return "u32" if p.format == "ptx" else "s32"


def _check_condition_constants(p: Program, src: Sources) -> None:
    """A constant compared with a name must fit the name's type, read either signed or unsigned
    (it is compared at that type, so a larger one would silently wrap)."""
    for r, value, pos in src.consts:
        ty = _ref_type(p, r)
        w = type_width(ty)
        lo, hi = (0, 1) if ty == "pred" else (-(1 << (w - 1)), (1 << w) - 1)
        if not lo <= value <= hi:
            name = r.loc if isinstance(r, MemRef) else f"{r.thread}:{r.reg}"
            raise SemanticError(f"{value} does not fit {name} (.{ty}), which the condition "
                                "compares it with", pos, f"{name} holds {w} bits: {lo}..{hi}")


def cond_consts(expr) -> list[tuple[object, int]]:
    """The (name, constant) pairs of a condition's comparisons, without recursion."""
    out, stack = [], [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Cmp):
            if isinstance(e.rhs, int):
                out.append((e.lhs, e.rhs))
        elif hasattr(e, "args"):
            stack += list(e.args)
        elif hasattr(e, "arg"):
            stack.append(e.arg)
    return out


# ----- registers: a must-be-written data flow over each thread's control flow ------------------------


# special registers the hardware defines (read-only, never written by the thread): their value is
# the thread's placement (events.py)
SPECIAL_REGS = frozenset({"%cluster_ctarank"})


def _reads(ins: Instruction, src: Sources) -> list[Reg]:
    regs = [o.base if isinstance(o, Addr) else o for o in operands(ins)]
    if ins.guard is not None:
        regs.insert(0, ins.guard[0])
    regs += src.extra_reads.get(id(ins), [])
    return [r for r in regs if isinstance(r, Reg) and r.name not in SPECIAL_REGS]


class _Flow:
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
        t, written = self.t, _written(self.t)
        init = (f"`.reg .{_reg_type(t, r.name)} {r.name} = 0;`" if self.src.dialect == "ptx"
                else f"`{t.name}:{r.name} = 0;` in the init block")
        what = f"`{ins.text}` reads {r.name}"
        if r.name not in written:
            raise SemanticError(
                f"{what}, which thread {t.name} never writes", ins.pos,
                did_you_mean(r.name, written) + "registers are undefined until written: write "
                f"it first, or give it an initial value with {init}")
        writers = ", ".join(f"line {_line(w.pos)}" + (" (predicated)" if w.guard else "")
                            for w in written[r.name][:3])
        raise SemanticError(
            f"{what}, which may not be written yet on every path to it", ins.pos,
            f"it is written at {writers}, not on every path that reaches line {_line(ins.pos)}"
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

"""Operands of a ``.ptx`` test as ``ptxas -arch=sm_90`` checks them: the instruction types each
opcode takes, register types (a ``.pred`` guard; sizes and kinds by the ISA's operand-type rules),
integer constants that fit their operand, addresses as values only in a 64-bit ``mov``, and the
state space of ``[x]`` the one x is declared in."""

from __future__ import annotations

import re

from ..._infra.records import record
from ...errors import SemanticError, SourcePos, UnsupportedError
from ...ir.instructions import WarpOp
from ...ir.program import (
    MEMORY_INSTRS,
    Alu,
    AsyncStore,
    Atom,
    Barrier,
    BulkCopy,
    Elect,
    Imm,
    Instruction,
    Load,
    Location,
    Mapa,
    MBarrier,
    Mov,
    Nanosleep,
    Program,
    Red,
    Reg,
    Selp,
    Setp,
    Store,
    Sym,
    TensorCopy,
    TensorMapReplace,
    Wgmma,
    type_width,
)
from ..ptx_isa import ATOM_TYPES, INSTR_TYPES, SETP_TYPES, register_fits
from .common import Sources, line_of

# ----- operands, as ptxas checks them (the .ptx front end) -----------------------------------------
# Instruction types, register types (PTX ISA "Operand Type Information"), integer constants,
# addresses as values and state spaces: ptxas -arch=sm_90 rejects what these reject (the tables
# are in ptx_isa.py; tests/syntax/test_ptxas_accepts_what_ptxmm_reads.py compares with ptxas).
# Registers without a `.reg` declaration (a litmus convenience) take the type of the instruction
# that uses them. One
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
    return f"{reg} holds a .{ty} (`{writer.text}`, line {line_of(writer.pos)}, writes it)"


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
    if isinstance(ins, Nanosleep):  # ptxas: "Arguments mismatch for instruction 'nanosleep'"
        return ("u32",), [(ins.t, "u32", False, "delay")]
    if isinstance(ins, MBarrier):
        return None, _mbar_slots(ins)
    if isinstance(ins, (Wgmma, Elect)):
        return None, _async_slots(ins)
    if isinstance(ins, WarpOp):
        return None, _warp_slots(ins)
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


def _warp_slots(ins: WarpOp) -> list:
    """A warp collective's (or bar.red's) operands in source order, as ptxas types them: d at the
    instruction's type (vote.any/all/uni and bar.red.and/or: .pred), p .pred, the source at the
    type (vote's and bar.red's a .pred), shfl's b and c, the membermask and the barrier .b32."""
    red = ins.form.startswith("bar.red")
    src = "pred" if ins.form.startswith("vote") or red else ins.type
    out = [(ins.dst, "b32" if ins.form.startswith("match") else ins.type, False, "destination"),
           (ins.pdst, "pred", False, "predicate destination"),
           (ins.b if red else None, "b32", False, "barrier"), (ins.a, src, False, "source"),
           (None if red else ins.b, "b32", False, "lane operand b"), (ins.c, "b32", False, "operand c"),
           (ins.mask, "b32", False, "membermask")]
    return [x for x in out if x[0] is not None]


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
    # a PTX module (nvcc's): ld/st's wider register is modelled (the builder extends a register
    # read by the type that last wrote it), not "not supported yet" as in a litmus test
    wide: bool = False

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
        self.slots(slots, mn)
        self.space()
        if isinstance(self.ins, Barrier):
            self.barrier(mn)
        if isinstance(self.ins, MBarrier):
            self.mbarrier_constants(self.ins, mn)

    def slots(self, slots: list, mn: str, first: int = 0) -> None:
        """Each operand of ``slots`` (operand, the type it is read or written at, whether ld/st's
        relaxed size rule applies, what it is), the ``first``-th operand in source order first."""
        for k, (op, slot, relaxed, what) in enumerate(slots, first):
            self.index = k
            if isinstance(op, Reg):
                self.register(op, slot, relaxed, what, mn)
            elif isinstance(op, Imm):
                self.constant(op, slot, what, mn)
            elif isinstance(op, Sym) and op.name in self.locs:
                self.address(op, slot, what, mn)

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
        if type_width(rt) > type_width(slot) and not self.wide:
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
        if slot[0] in "usb" and (w == 64 or (self.wide and w == 32 and loc.space == "shared")):
            return  # (a kernel's layout gives .shared addresses that fit 32 bits: nvcc's `mov.u32`)
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




def check_module_instruction(ins: Instruction, types: dict[str, str], locs: dict[str, Location],
                             spots: list, extra: list | None = None, first: int = 0) -> None:
    """One instruction of a PTX module (nvcc's) as the ``.ptx`` front end checks a litmus
    thread's: ``types`` the function's declared registers. ``extra``: (operand, type, relaxed,
    what) of operands the instruction's IR form does not keep (a lowered form's, a dropped hint),
    checked instead of the IR form's own when ``extra`` is given; ``first``: the source index of
    the first of them."""
    ops = _Operands(ins, {r: (t, None) for r, t in types.items()}, locs, spots, wide=True)
    if extra is None:
        ops.run()
        return
    ops.guard()
    ops.slots(extra, _mnemonic(ins), first)
    ops.space()  # a lowered access's (a vector's element's) address, as a scalar one's


def mnemonic(ins: Instruction) -> str:
    """The instruction's mnemonic as written (without its guard)."""
    return _mnemonic(ins)

"""Every instruction of a PTX module checked as ``ptxas -arch=sm_90`` checks it (issue 38): the
``.ptx`` front end's operand rules (:func:`ptxmm.syntax.check.check_module_instruction`: the
instruction types an opcode takes, a register's declared size and kind against the instruction's
type, constants that fit, addresses, state spaces) for the forms the litmus decoder reads, and the
same register rule for the forms :mod:`.lowering` rewrites, operand by operand as ptxas reads
them. Each rule below was asked of ptxas (CUDA 13, a matrix of every register type per operand;
tests/kernel/test_module_operands.py keeps asking):

- ``ld``/``st`` (scalar, ``.param``, ``.nc``, ``.const``): a register at least as wide as an
  integer or bit-size type ("relaxed"; a narrower one is "Arguments mismatch for instruction
  'ld'"); a vector access's elements exactly as wide as its type;
- ``cvt.dtype.atype d, a``: both relaxed (``cvt.u32.u16 %r, %r`` and ``cvt.u16.u32 %rd, %r``
  assemble; ``cvt.s64.s32 %r, %r`` does not);
- ``mul.wide``/``mad.wide``: d (and mad's c) of twice the width, a and b of the type; ``mul.hi``,
  ``mad.lo|hi``, ``abs``, ``bfe``, ``bfi``, ``cvta``: every operand of the type (exact width);
  bfe's and bfi's position and length ``.u32``; ``cvta`` only ``.u64`` ("32-Bit addressing is
  not supported on sm_90"); ``bar.warp.sync``'s mask and a try_wait's
  suspend-time hint ``.b32``; a tensor copy's cache policy ``.b64``;
- special registers (``%tid.x``, ``%laneid``, ...): only ``mov`` and ``cvt`` read one ("Special
  register argument not allowed for instruction 'add'"); ``mov`` at 32 bits, or 16 for ``%tid``,
  ``%ntid``, ``%ctaid``, ``%nctaid`` (the ISA's legacy 16-bit forms); ``cvt`` as a ``.u32``."""

from __future__ import annotations

import re

from ..._infra.records import record
from ...errors import SemanticError, SourcePos
from ...ir.program import Instruction, Reg
from ...ir.sregs import is_dynamic
from ...ir.sregs import width as sreg_width
from ...syntax.check import check_module_instruction
from ...syntax.decode import Vec
from ...syntax.ptx_isa import INSTR_TYPES
from ..threads import SPECIAL

_LEGACY16 = re.compile(r"^%(tid|ntid|ctaid|nctaid)\.[xyz]$")
_TYPE = re.compile(r"(u|s|b|f)(8|16|32|64)|pred")


@record(frozen=False)
class Checked:
    """One instruction statement of a function as written, and what it became."""

    base: str
    quals: list
    ops: list
    pos: SourcePos
    decoded: list  # IR instructions (a _PendingCopy for a bulk copy of a register size)
    lowered: bool  # rewritten by .lowering (not the litmus decoder's IR form)
    cols: list  # each operand's column (0: unknown)
    guard: tuple | None = None  # (the guard's register, its column)


def operand_columns(line: str, col: int) -> list[int]:
    """The 1-based column of each top-level operand of the statement at ``col`` of ``line``:
    after its guard and mnemonic, split at commas outside brackets, up to the ``;``."""
    i = col - 1
    m = re.compile(r"\s*(?:@!?\s*%?[\w$.]+\s+)?\S+").match(line, i)
    if m is None:
        return []
    i = m.end()
    out, depth, start = [], 0, None
    while i < len(line) and line[i] != ";":
        ch = line[i]
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            start = None
        elif start is None and not ch.isspace():
            start = i + 1
            out.append(start)
        i += 1
    return out


def check_function(items: list[Checked], regs: dict[str, str], locs: dict) -> None:
    """Raise the first operand error of a function's instructions, in source order."""
    for c in items:
        spots = [(op, _at(c, k)) for k, op in enumerate(c.ops)]
        if c.guard is not None:  # after the operands: their indexes are their source order
            from dataclasses import replace

            spots.append((c.guard[0], replace(c.pos, col=c.guard[1])))
        _specials(c, spots)
        ins = next((i for i in c.decoded if isinstance(i, Instruction)), None)
        if ins is None:
            continue
        if c.lowered:
            _lowered_type(c, c.pos)
            if c.base in ("ld", "st"):
                _vector_widths(c, regs, spots)
        extra = _lowered_slots(c) if c.lowered else None
        if extra is not None or not c.lowered:
            first = 0
            if not c.lowered:  # the operands the IR form drops, after the ones it keeps
                for i in c.decoded:
                    if isinstance(i, Instruction):
                        check_module_instruction(i, regs, locs, spots)
                extra, first = _dropped(c)
                if not extra:
                    continue
            check_module_instruction(ins, regs, locs, spots, extra, first)


def _at(c: Checked, k: int) -> SourcePos:
    if k < len(c.cols) and c.cols[k]:
        from dataclasses import replace

        return replace(c.pos, col=c.cols[k])
    return c.pos


def _types(quals: list[str]) -> list[str]:
    return [q for q in quals if _TYPE.fullmatch(q)]


def _twice(ty: str) -> str:
    return f"{ty[0]}{2 * int(ty[1:])}"


def _lowered_slots(c: Checked) -> list | None:
    """(operand, type, relaxed, what) of each operand of a lowered form, in source order; None
    where the form has no register operands to check."""
    b, q, ops = c.base, c.quals, c.ops
    tys = _types(q)
    if not tys and b != "bar":
        return None
    ty = tys[-1] if tys else "b32"
    names = ("destination", "first source", "second source", "third source", "fourth source")
    if b == "cvt" and len(tys) == 2:
        return [(ops[0], tys[0], True, "destination"), (ops[1], tys[1], True, "source")]
    if b in ("ld", "st") and any(v in q for v in ("v2", "v4", "v8")):
        vec = ops[0] if b == "ld" else ops[1]
        return _vector_slots(vec, ty) if isinstance(vec, Vec) else None
    if b == "ld":
        return [(ops[0], ty, True, "destination")]
    if b == "st":
        return [(None, "", False, "address"), (ops[1], ty, True, "source")]
    if b == "bar":
        return [(ops[0], "b32", False, "membermask")]
    wide = "wide" in q
    if b in ("mul", "mad"):
        out = [(ops[0], _twice(ty) if wide else ty, False, "destination")]
        out += [(o, ty, False, names[k + 1]) for k, o in enumerate(ops[1:3])]
        if b == "mad":
            out.append((ops[3], _twice(ty) if wide else ty, False, "third source"))
        return out
    if b in ("bfe", "bfi"):
        n = 2 if b == "bfe" else 3
        return [(o, ty if k < n else "u32", False, names[k] if k < n else
                 ("position" if k == n else "length")) for k, o in enumerate(ops)]
    if b in ("abs", "cvta"):
        return [(o, ty, False, names[k]) for k, o in enumerate(ops)]
    return None


def _vector_slots(vec: Vec, ty: str) -> list:
    """A vector access's elements: each as ld/st's relaxed rule takes a scalar's."""
    return [(o, ty, True, f"element {k} of the vector") for k, o in enumerate(vec.items)]


def _vector_widths(c: Checked, regs: dict[str, str], spots: list) -> None:
    """ptxas: a vector's registers all of one size (``{%rs1, %r2}`` is "Arguments mismatch"), and
    not float and integer registers together (``.b`` registers go with either)."""
    vec = c.ops[0] if c.base == "ld" else c.ops[1] if len(c.ops) > 1 else None
    if not isinstance(vec, Vec):
        return
    sized = [(o.name, regs[o.name]) for o in vec.items if isinstance(o, Reg) and o.name in regs]
    widths = {1 if t == "pred" else int(t[1:]) for _, t in sized}
    if len(widths) > 1:
        shown = ", ".join(f"{r} (.{t})" for r, t in sized)
        raise SemanticError(f"the registers of the vector of `{'.'.join([c.base, *c.quals])}` differ in "
                            f"size: {shown}", spots[0 if c.base == "ld" else 1][1],
                            "ptxas takes a vector of registers of one size: declare them alike")
    kinds = {"float" if t.startswith("f") else "integer" for _, t in sized if t[0] in "fus"}
    if len(kinds) > 1:  # .b registers go with either (ptxas 13: {.f32, .b32} passes, {.f32, .u32} not)
        shown = ", ".join(f"{r} (.{t})" for r, t in sized)
        raise SemanticError(f"the vector of `{'.'.join([c.base, *c.quals])}` mixes float and integer "
                            f"registers: {shown}", spots[0 if c.base == "ld" else 1][1],
                            "ptxas: \"Vector with elements of different types are not allowed\": "
                            "declare them alike, or as .b registers")


# the instruction types each lowered form takes (ptxas: "Unexpected instruction types specified
# for 'mul.wide'", "Instruction 'abs' applies only to signed numeric types", ...)
_INT = tuple(f"{k}{w}" for k in "us" for w in (16, 32, 64))
_LOWERED_TYPES = {
    "cvt": tuple(f"{k}{w}" for k in "us" for w in (8, 16, 32, 64)), "cvta": ("u64",),
    "mul.wide": ("u16", "u32", "s16", "s32"), "mad.wide": ("u16", "u32", "s16", "s32"),
    "mul.hi": _INT, "mad.lo": _INT, "mad.hi": _INT, "abs": ("s16", "s32", "s64"),
    "bfe": ("u32", "u64", "s32", "s64"), "bfi": ("b32", "b64"),
    "ld": INSTR_TYPES["ld"], "st": INSTR_TYPES["st"],  # .param, vectors: no .pred
}


def _lowered_type(c: Checked, pos: SourcePos) -> None:
    mode = next((q for q in c.quals if q in ("wide", "hi", "lo")), None)
    form = f"{c.base}.{mode}" if c.base in ("mul", "mad") and mode else c.base
    allowed = _LOWERED_TYPES.get(form)
    tys = _types(c.quals)
    if allowed is None or not tys:
        return
    bad = next((t for t in tys if t not in allowed and not t.startswith("f")), None)
    if bad is not None:
        raise SemanticError(f"`{'.'.join([c.base, *c.quals])}` does not take the type .{bad}", pos,
                            f"`{form}` takes " + " ".join("." + t for t in allowed))


def _dropped(c: Checked) -> tuple[list, int]:
    """Operands the litmus decoder's IR form does not keep: a try_wait's suspend-time hint, a
    tensor copy's cache policy."""
    if c.base == "mbarrier" and len(c.ops) == 4:
        return [(c.ops[3], "b32", False, "suspend-time hint")], 3
    if c.base == "cp" and "L2::cache_hint" in c.quals and c.ops:
        return [(c.ops[-1], "b64", False, "cache policy")], len(c.ops) - 1
    return [], 0


def _specials(c: Checked, spots: list) -> None:
    """ptxas reads a special register only in mov and cvt; mov at 32 bits (16 for the legacy
    %tid, %ntid, %ctaid, %nctaid)."""
    for k, op in enumerate(c.ops):
        if not (isinstance(op, Reg) and SPECIAL.match(op.name)):
            continue
        mn = ".".join([c.base, *c.quals])
        if c.base not in ("mov", "cvt"):
            raise SemanticError(f"the special register {op.name} as an operand of `{mn}`", spots[k][1],
                                f"ptxas reads a special register only with mov or cvt: "
                                f"`mov.u32 %r1, {op.name};`, then use %r1")
        ty = (_types(c.quals) or ["u32"])[-1]
        width = int(ty[1:]) if ty[1:].isdigit() else 0
        natural = sreg_width(op.name) if is_dynamic(op.name) else 32
        if c.base == "mov" and (ty[0] not in "usb" or width not in (16, natural)
                                or (width == 16 and not _LEGACY16.match(op.name))):
            raise SemanticError(f"`{mn}` reads the {natural}-bit special register {op.name} at .{ty}",
                                spots[k][1], f"write `mov.u{natural} %r1, {op.name};` (a {natural}-bit "
                                "register), and cvt it to another width")

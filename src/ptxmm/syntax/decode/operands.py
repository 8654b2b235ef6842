"""The operands of a ``.ptx`` instruction as the decoders check them: kinds and count, the
front-end forms (a vector ``{...}``, a texture/surface operand ``[t, {x}]``) and the constant
count of a ``wait_group``."""

from __future__ import annotations

from dataclasses import field

from ..._infra.records import record
from ...errors import ParseError
from ...ir.program import (
    Addr,
    Imm,
    Operand,
    Reg,
    Sym,
)
from .qualifiers import Quals


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

_KINDS = {"r": Reg, "v": (Reg, Imm, Sym), "m": Addr, "l": Sym, "h": Handle, "V": Vec, "d": Reg,
          "s": (Reg, Imm)}


def operands(ops: list, kinds: str, q: Quals, form: str) -> list:
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

def group_count(n: Operand, q: Quals, form: str) -> int:
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

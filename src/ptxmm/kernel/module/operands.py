"""One operand of an nvcc instruction: a register, an immediate (an integer; a float literal), a
symbol, an address ``[base+off]``, a vector ``{a, b}`` or a tensor operand; operand lists split at
top-level commas."""

from __future__ import annotations

import re

from ..._infra.records import record
from ...errors import ParseError, SourcePos, UnsupportedError
from ...ir.program import Addr, Imm, Reg, Sym
from ...syntax.common import int_literal
from ...syntax.decode import Handle, Vec

# ----- operands ----------------------------------------------------------------------------------

_INT = re.compile(r"^[+-]?(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)U?$")
_FLOAT = re.compile(r"^[+-]?(0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?"
                    r"|[0-9]+[eE][+-]?[0-9]+)$")


@record
class FloatLit:
    """A floating-point constant as written: ``0f3F800000`` (the exact bits of an f32),
    ``0d3FF0000000000000`` (of an f64) or a decimal (PTX ISA 4.5.4: "represented as 64-bit
    double-precision values"); the lowering gives it the bits of its instruction's type."""

    text: str


def _split_top(s: str) -> list[str]:
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


_TENSOR_OPERAND = re.compile(r"^\[\s*([^,\]]+?)\s*,\s*\{([^{}]*)\}\s*\]$")


def _operand(s: str, pos: SourcePos):
    s = s.strip()
    m = _TENSOR_OPERAND.match(s)
    if m:  # cp.async.bulk.tensor's [tensorMap, {c0, c1}]: the map's address and the coordinates
        addr = _operand(f"[{m.group(1)}]", pos)
        coords = tuple(_operand(c, pos) for c in m.group(2).split(",") if c.strip())
        return Handle(addr, coords)
    if s.startswith("[") and s.endswith("]"):
        inner = s[1:-1].replace(" ", "")
        m = re.match(r"^([%A-Za-z_$][\w$.]*)?(?:\+?([+-]?(?:0[xX][0-9a-fA-F]+|\d+)))?$", inner)
        if not m or (m.group(1) is None and m.group(2) is None):
            raise ParseError(f"cannot read the address `{s}`", pos, "expected [reg], [reg+off], [name+off]")
        base, off = m.group(1), m.group(2)
        offset = int_literal(off.lstrip("+")) if off else 0
        if base is None:
            raise UnsupportedError(f"an absolute address `{s}`", pos, "address a variable or a register")
        return Addr(Reg(base) if base.startswith("%") else Sym(base), offset)
    if "|" in s and not s.startswith(("[", "{")):  # `d|p` (elect, shfl, match.all): two destinations
        return Vec(tuple(_operand(x, pos) for x in s.split("|", 1)), pair=True)
    if s.startswith("{") and s.endswith("}"):
        return Vec(tuple(_operand(x, pos) for x in _split_top(s[1:-1])))
    if s.startswith("%") or s.startswith("!%"):
        return Reg(s)
    if _INT.match(s):
        return Imm(int_literal(s[:-1] if s.endswith("U") else s))
    if _FLOAT.match(s):  # its bits depend on the instruction's type: kernel/module/floats.py
        return FloatLit(s)
    if re.match(r"^[A-Za-z_$][\w$]*$", s):
        return Sym(s)
    m = re.match(r"^([A-Za-z_$][\w$]*)\+(\d+)$", s)  # `name+4` as a value (generic address)
    if m:
        return ("symoff", m.group(1), int(m.group(2)))
    raise ParseError(f"cannot read the operand `{s}`", pos, None)

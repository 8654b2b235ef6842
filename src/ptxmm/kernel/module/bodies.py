"""A function body: each statement of an nvcc function decoded (labels, register declarations,
calls, instructions through the litmus decoder or :mod:`.lowering`), warp collectives refused."""

from __future__ import annotations

import re
from dataclasses import replace

from ...errors import ParseError, UnsupportedError
from ...ir.program import Reg
from ...syntax.decode import decode
from ...syntax.decode.qualifiers import split_mnemonic
from ...syntax.decode.warp import WARP_OPCODES, decode_bar_red, decode_warp
from .checks import Checked, operand_columns
from .lowering import _NVCC, _ORDERED, _canonical
from .operands import _operand, _split_top
from .records import Call, Function, KernelPos
from .sizes import _bulk_sizes
from .statements import _pos, _short, _Stmt

# ----- function bodies ---------------------------------------------------------------------------

WARP_COLLECTIVES = {"wmma", "mma", "ldmatrix", "stmatrix", "wgmma"}
_SCRATCH = "%ptxmm."


class _FunctionBuilder:
    def __init__(self, file: str, name: str, entry: bool, params, rets, pos):
        self.file, self.name, self.entry = file, name, entry
        self.params, self.rets, self.pos = params, rets, pos
        self.body: list = []
        self.variables: list[_Stmt] = []  # declarations of the module's, written inside the function
        self.regs: list[tuple[str, str, int | None]] = []
        self.tmp = 0
        self.lines: list[str] = []  # the module's text, for operand columns
        self.checked: list[Checked] = []  # each instruction as written, for .checks

    def build(self) -> Function:
        return Function(self.name, self.entry, self.params, self.rets, tuple(_bulk_sizes(self.body)),
                        tuple(self.regs), self.pos)

    def statement(self, st: _Stmt) -> None:
        pos = _pos(self.file, st)
        if st.kind == "label":
            from ...ir.program import Label

            self.body.append(Label(name=st.text, pos=pos, text=f"{st.text}:"))
            return
        text = st.text
        if text.startswith(".reg"):
            self.reg_decl(text, pos)
            return
        if text.startswith((".param", ".pragma", ".maxntid", ".reqntid", ".minnctapersm", ".maxnreg",
                            ".noreturn")):
            return
        if text.startswith((".shared", ".global")):  # a static __shared__ (nvcc: "demoted variable")
            self.variables.append(st)
            return
        if text.startswith((".local", ".const")):
            raise UnsupportedError(f"a variable declared inside function {self.name}: `{_short(text)}`",
                                   pos, "per-thread local arrays (.local) are not modelled yet")
        self.instruction(text, pos)

    def reg_decl(self, text: str, pos) -> None:
        m = re.match(r"^\.reg\s+\.(\w+)\s+(.*)$", text)
        if not m:
            raise ParseError(f"cannot read `{text}`", pos, "expected `.reg .TYPE %r<N>;`")
        ty = m.group(1)
        for item in _split_top(m.group(2)):
            r = re.match(r"^(%?[\w$]+)<(\d+)>$", item)
            if r:
                self.regs.append((r.group(1), ty, int(r.group(2))))
            else:
                self.regs.append((item, ty, None))

    def scratch(self) -> Reg:
        self.tmp += 1
        return Reg(f"{_SCRATCH}t{self.tmp}")

    def instruction(self, text: str, pos: KernelPos) -> None:
        guard = None
        body = text
        m = re.match(r"^@(!?)(%[\w$.]+)\s+(.*)$", text)
        if m:
            guard = (Reg(m.group(2)), m.group(1) == "!")
            body = m.group(3)
        mn, _, rest = body.partition(" ")
        if mn.split(".")[0] == "call":
            self.body.append(_call(mn, rest, pos, text, guard))
            return
        ops = [_operand(o, pos) for o in _split_top(rest)] if rest.strip() else []
        opcol = text.find(mn)
        mpos = replace(pos, col=pos.col + max(opcol, 0))
        out, lowered = _decode(self, mn, ops, mpos, text, guard)
        self.body += out
        line = self.lines[pos.line - 1] if 0 < pos.line <= len(self.lines) else ""
        base, *quals = mn.split(".")
        gcol = (pos.col + (2 if text.startswith("@!") else 1), ) if guard else ()
        self.checked.append(Checked(base, quals, ops, mpos, out, lowered, operand_columns(line, pos.col),
                                    (guard[0], *gcol) if guard else None))


def _call(mn: str, rest: str, pos, text: str, guard) -> Call:
    parts = _split_top(rest)
    rets: tuple[str, ...] = ()
    if parts and parts[0].startswith("("):
        rets = tuple(x.strip() for x in parts[0].strip("() ").split(",") if x.strip())
        parts = parts[1:]
    if not parts:
        raise ParseError("a call names its function", pos, None)
    callee = parts[0]
    args: tuple[str, ...] = ()
    if len(parts) > 1:
        if parts[1].startswith("("):
            args = tuple(x.strip() for x in parts[1].strip("() ").split(",") if x.strip())
        else:
            raise UnsupportedError(f"indirect call `{_short(text)}`", pos, None)
    return Call(callee, rets, args, pos, " ".join(text.split()), guard)

def _decode(fb: _FunctionBuilder, mn: str, ops: list, pos: KernelPos, text: str, guard
            ) -> tuple[list, bool]:
    """One nvcc instruction → IR instructions (most through the litmus decoder), and whether
    :mod:`.lowering` rewrote it (a try_wait's hint and a copy's cache policy dropped count as
    the litmus decoder's form)."""
    base, *quals = mn.split(".")
    c = dict(pos=pos, text=" ".join(text.split()), guard=guard)
    if base in WARP_OPCODES or base == "elect" or (base == "bar" and "warp" in quals) or \
            (base in ("bar", "barrier") and "red" in quals):
        return [_warp(mn, ops, pos, c)], False
    if base in WARP_COLLECTIVES:
        raise UnsupportedError(f"warp-collective instruction `{mn}`", pos,
                               "ptxmm models shfl.sync, vote.sync, match.sync, redux.sync, "
                               "activemask, elect.sync and bar.warp.sync; the matrix "
                               "instructions are not modelled yet")
    if any(isinstance(o, tuple) for o in ops):
        raise UnsupportedError(f"an address-plus-offset operand in `{_short(text)}`", pos, None)
    handler = _NVCC.get(base)
    if handler is not None:
        out = handler(fb, quals, ops, c)
        if out is not None:
            return out, base not in ("mbarrier", "cp") or "bulk" in quals and "tensor" not in quals
    if base in ("ld", "st", "atom", "red") and "param" in quals:
        raise UnsupportedError(f"`{mn}`", pos, "parameters are read with ld.param")
    for o in ops:  # `!%p` (a negated predicate operand) is not an IR operand
        if isinstance(o, Reg) and o.name.startswith("!"):
            raise UnsupportedError(f"negated predicate operand {o.name} in `{mn}`", pos, None)
    if base in _ORDERED:
        mn = _canonical(base, quals)
    return [decode(mn, ops, pos, c["text"], guard)], False


def _warp(mn: str, ops: list, pos: KernelPos, c: dict):
    """A warp collective or bar.red (syntax/decode/warp.py)."""
    base, q = split_mnemonic(mn, pos)
    out = list(ops)  # nvcc's `d|p` is one operand (.operands._operand)
    if base in ("bar", "barrier") and "red" in mn.split("."):
        return decode_bar_red(base, q, out, c)
    return decode_warp(base, q, out, c)


# ptxas accepts the qualifiers of ld/st/atom/red in any order (libcu++ writes
# `atom.cas.acquire.gpu.b32`, CUTLASS `ld.global.acquire.gpu.b32`); the litmus decoder checks the
# ISA's order, so a kernel's are put in it first: semantics, scope, state space, cache hints, operation,

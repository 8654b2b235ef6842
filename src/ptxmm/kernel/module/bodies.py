"""A function body: each statement of an nvcc function decoded (labels, register declarations,
calls, instructions through the litmus decoder or :mod:`.lowering`), warp collectives refused."""

from __future__ import annotations

import re
from dataclasses import replace

from ...errors import ParseError, SemanticError, SourcePos, UnsupportedError
from ...ir.program import Reg
from ...syntax.decode import decode
from ...syntax.decode.qualifiers import split_mnemonic
from ...syntax.decode.warp import WARP_OPCODES, decode_bar_red, decode_warp
from .checks import Checked, operand_columns
from .lowering import _NVCC, _ORDERED, _canonical
from .operands import _operand, _split_top
from .records import Call, EntryDirective, Function, KernelPos
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
        self.directives: list[EntryDirective] = []  # .maxntid, .reqnctapercluster, ...

    def build(self) -> Function:
        return Function(self.name, self.entry, self.params, self.rets, tuple(_bulk_sizes(self.body)),
                        tuple(self.regs), self.pos, tuple(self.directives))

    def header(self, text: str, pos: SourcePos) -> None:
        """The directives between the header's parameter list and the body (``text``, at
        ``pos``): each one :func:`entry_directives` reads, kept on the Function."""
        for d in entry_directives(text, pos, self.lines, self.entry):
            first = next((x for x in self.directives if x.name == d.name), None)
            if first is not None and first.values != d.values:
                raise UnsupportedError(f"a second `.{d.name}` on function {self.name}, with other values",
                                       d.pos, "ptxas accepts it, but which one it keeps is not documented: "
                                       "keep one")
            if first is None:
                self.directives.append(d)
        names = {d.name for d in self.directives}
        for a, b in (("maxntid", "reqntid"), ("maxclusterrank", "reqnctapercluster")):
            if a in names and b in names:  # PTX ISA 11.4.3 and 11.7.3
                at = next(d.pos for d in self.directives if d.name == b)
                raise SemanticError(f"`.{a}` and `.{b}` on one kernel ({self.name})", at,
                                    f"PTX ISA: the .{b} directive cannot be used in conjunction with .{a}")

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
        if text.startswith((".param", ".pragma", ".noreturn")):
            return
        if text.split(" ", 1)[0][1:] in ENTRY_DIRECTIVES:
            self.header(text, pos)
            return
        if text.startswith((".shared", ".global", ".local")):  # a static __shared__ (nvcc: "demoted
            self.variables.append(st)  # variable"); a .local array: each thread's own (kernel/memory.py)
            return
        if text.startswith(".const"):
            raise UnsupportedError(f"a variable declared inside function {self.name}: `{_short(text)}`",
                                   pos, "declare __constant__ data at module scope")
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


# PTX ISA 11.4 (performance tuning), 11.7 (cluster dimensions), 11.8 (.blocksareclusters): the
# directives a kernel's header may carry → how many integers each takes (lo, hi). None of them
# changes what a thread does; the launch checks (kernel/launch.py, apply_directives) read the
# ones CUDA validates a launch against.
ENTRY_DIRECTIVES: dict[str, tuple[int, int]] = {
    "maxntid": (1, 3), "reqntid": (1, 3), "reqnctapercluster": (1, 3), "maxnreg": (1, 1),
    "minnctapersm": (1, 1), "maxnctapersm": (1, 1), "maxclusterrank": (1, 1), "explicitcluster": (0, 0),
    "blocksareclusters": (0, 0), "noreturn": (0, 0), "abi_preserve": (1, 1), "abi_preserve_control": (1, 1),
}
_FUNC_ONLY = {"noreturn", "abi_preserve", "abi_preserve_control"}  # the rest: kernels (.entry) only
_ENTRY_DIRECTIVE = re.compile(r"\.([a-z_]+)\s*((?:\d+\s*,\s*)*\d+)?")


def entry_directives(text: str, pos: SourcePos, lines: list[str], entry: bool) -> list[EntryDirective]:
    """The directives of ``text`` (what follows a header's parameter list: ``.maxntid 4, 1, 1
    .minnctapersm 2``, or one such directive alone), each with the PTX line it stands on (found
    in ``lines``, the module's text, from ``pos`` on). An unknown directive, a wrong number of
    values, a value of 0 (ptxas: "Positive non-zero value expected"), a kernel's directive on a
    ``.func`` or a function's on an ``.entry`` is a located error (PTX ISA 11.4: ".maxnreg,
    .maxntid, .reqntid, and .minnctapersm directives may be applied per-entry"; 11.7: "The cluster
    dimension directives can be applied only on kernel functions"; .noreturn and .abi_preserve
    "can only be specified on device functions")."""
    out: list[EntryDirective] = []
    rest = text.strip()
    line = pos.line
    while rest:
        m = _ENTRY_DIRECTIVE.match(rest)
        if not m:
            raise UnsupportedError(f"`{_short(rest)}` after the header of a function", pos,
                                   "directives read: " + ", ".join("." + d for d in ENTRY_DIRECTIVES))
        name = m.group(1)
        values = tuple(int(v) for v in re.findall(r"\d+", m.group(2) or ""))
        line, col = _find(lines, "." + name, line)
        at = SourcePos(pos.file, line, col) if line else pos
        if name not in ENTRY_DIRECTIVES:
            raise UnsupportedError(f"directive `.{name}` on a function", at,
                                   "directives read: " + ", ".join("." + d for d in ENTRY_DIRECTIVES))
        lo, hi = ENTRY_DIRECTIVES[name]
        if not lo <= len(values) <= hi:
            n = lo if lo == hi else f"{lo} to {hi}"
            raise ParseError(f"`.{name}` takes {n} value(s), not {len(values)}", at, None)
        if any(v == 0 for v in values) and name not in ("abi_preserve", "abi_preserve_control"):
            raise SemanticError(f"`.{name}` with a value of 0", at, "every extent is at least 1")
        if (name in _FUNC_ONLY) == entry:
            where, other = (".entry", "device functions (.func)") if entry else (".func", "kernels (.entry)")
            raise SemanticError(f"`.{name}` on a {where}", at, f"PTX ISA: .{name} applies to {other} only")
        if name in ("maxntid", "reqntid", "reqnctapercluster"):
            values += (1,) * (3 - len(values))
        out.append(EntryDirective(name, values, at))
        rest = rest[m.end():].lstrip()
    return out


def _find(lines: list[str], word: str, start: int) -> tuple[int, int]:
    """The (line, column) of ``word`` from line ``start`` on (0, 0: not found)."""
    for ln in range(max(start, 1), min(len(lines), start + 64) + 1):
        k = lines[ln - 1].find(word)
        if k >= 0:
            return ln, k + 1
    return 0, 0


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
            _destinations(out, mn, pos)
            return out, base not in ("mbarrier", "cp") or "bulk" in quals and "tensor" not in quals
    if base in ("ld", "st", "atom", "red") and "param" in quals:
        raise UnsupportedError(f"`{mn}`", pos, "parameters are read with ld.param")
    for o in ops:  # `!%p` (a negated predicate operand) is not an IR operand
        if isinstance(o, Reg) and o.name.startswith("!"):
            raise UnsupportedError(f"negated predicate operand {o.name} in `{mn}`", pos, None)
    if base in _ORDERED:
        mn = _canonical(base, quals)
    return [decode(mn, ops, pos, c["text"], guard)], False


def _destinations(out: list, mn: str, pos: KernelPos) -> None:
    """A lowering writes registers only: a destination operand that is an immediate or an address
    (``add.f32 5, %f1, %f2``) is the located error ptxas gives ("Arguments mismatch"), not a value
    the builder would try to store into."""
    for ins in out:
        d = getattr(ins, "dst", None)
        if d is not None and not isinstance(d, Reg):
            raise ParseError(f"the destination of `{mn}` must be a register", pos,
                             "ptxas: Arguments mismatch for instruction")


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

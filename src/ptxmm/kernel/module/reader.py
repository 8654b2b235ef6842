"""The module reader: statements (:mod:`.statements`) → a :class:`.records.Module` — its
functions (bodies by :mod:`.bodies`), variables with their initialisers, version and target;
nested scopes' registers renamed apart; :func:`is_module` tells a module from a litmus test."""

from __future__ import annotations

import re
from dataclasses import replace

from ...errors import ParseError, UnsupportedError
from ...syntax.common import int_literal
from .bodies import _FunctionBuilder
from .checks import check_function
from .operands import _split_top
from .records import Function, Module, Param, Variable, type_width_bytes
from .statements import _pos, _short, _Splitter, _Stmt

# ----- the module --------------------------------------------------------------------------------

def parse(text: str, file: str = "<string>") -> Module:
    """A PTX module: its functions (bodies decoded), its variables and its ``// ptxmm:`` lines."""
    sp = _Splitter(text, file)
    stmts = sp.run()
    # .file lines usually follow the code that uses them: resolve the CUDA positions afterwards
    stmts = _late_files(text, file, stmts, sp)
    b = _ModuleBuilder(file)
    b.lines = text.splitlines()
    i = 0
    while i < len(stmts):
        i = b.top(stmts, i)
    locs = {v.name: v for v in b.variables}
    for checked, regs in b.checks:  # every function's instructions, as ptxas checks them
        check_function(checked, regs, locs)
    return Module(file, b.functions, tuple(b.variables), b.version, b.target, b.address_size,
                  tuple(sp.directives), tuple(b.notes))


def _late_files(text: str, file: str, stmts: list[_Stmt], sp: _Splitter) -> list[_Stmt]:
    """Statements re-split once every ``.file`` is known (nvcc writes them after the code)."""
    if not sp.files or all(s.src is not None for s in stmts if s.kind == "stmt") or sp.main is None:
        return stmts
    again = _Splitter(text, file)
    again.files = dict(sp.files)
    return again.run()

_SPACES = {".global": "global", ".shared": "shared", ".const": "const", ".local": "local"}


class _ModuleBuilder:
    def __init__(self, file: str):
        self.file = file
        self.functions: dict[str, Function] = {}
        self.variables: list[Variable] = []
        self.version = self.target = ""
        self.address_size = 64
        self.notes: list = []
        self.lines: list[str] = []
        self.checks: list = []  # (a function's instructions as written, its registers' types)

    def top(self, stmts: list[_Stmt], i: int) -> int:
        st = stmts[i]
        if st.kind == "open":  # a stray scope at file level
            raise ParseError("a `{` outside a function", _pos(self.file, st), None)
        if st.kind != "stmt":
            raise ParseError(f"unexpected `{st.text}` outside a function", _pos(self.file, st), None)
        words = st.text.split()
        head = words[0]
        if head in (".version", ".target", ".address_size", ".pragma"):
            self.module_directive(st, words)
        elif re.search(r"\.(entry|func)\b", st.text):
            if i + 1 < len(stmts) and stmts[i + 1].kind == "open":
                return self.function(stmts, i)
            # else a prototype (`.extern .func __assertfail (...)`, a forward declaration)
        elif head in (".visible", ".extern", ".weak") and len(words) > 1 and words[1] in _SPACES:
            if head != ".extern" or (words[1] == ".shared" and st.text.rstrip().endswith("[]")):
                self.variable(st, words[1:])  # (an extern __shared__ array: dynamic shared memory)
        elif head in _SPACES:
            self.variable(st, words)
        else:
            raise ParseError(f"unexpected statement `{_short(st.text)}` at module level",
                             _pos(self.file, st), "a module holds directives, variables and functions")
        return i + 1

    def module_directive(self, st: _Stmt, words: list[str]) -> None:
        head = words[0]
        if head == ".version":
            self.version = words[1] if len(words) > 1 else ""
        elif head == ".target":
            self.target = " ".join(words[1:])
        elif head == ".address_size":
            self.address_size = int(words[1]) if len(words) > 1 and words[1].isdigit() else 64
            if self.address_size != 64:
                raise UnsupportedError(".address_size 32", _pos(self.file, st),
                                       "compile for 64-bit addresses (nvcc's default)")

    def variable(self, st: _Stmt, words: list[str]) -> None:
        text = " ".join(words)
        m = re.match(r"^\.(global|shared|const|local)((?:\s+\.[\w:]+(?:\s+\d+)?)*)\s+([A-Za-z_$%][\w$]*)"
                     r"(?:\[(\d*)\])?\s*(?:=\s*(.*))?$", text)
        if not m:
            raise ParseError(f"cannot read the declaration `{_short(st.text)}`", _pos(self.file, st),
                             "expected `.global .align A .TYPE name[N] = {...};`")
        space, quals, name, count, init = m.groups()
        qs = quals.split()
        align = 0
        if ".align" in qs:
            k = qs.index(".align")
            align = int(qs[k + 1]) if k + 1 < len(qs) and qs[k + 1].isdigit() else 0
        types = [q[1:] for q in qs if re.fullmatch(r"\.(u|s|b|f)(8|16|32|64)", q)]
        if not types:
            raise UnsupportedError(f"declaration `{_short(st.text)}` without a scalar type",
                                   _pos(self.file, st), None)
        ty = types[0]
        n = int(count) if count else None
        byte_array = ty == "b8" and bool(n)
        if count == "" and space == "shared":  # extern __shared__: the launch gives its type and size
            self.variables.append(Variable(name, space, ty, 0, (), align, _pos(self.file, st), True))
            return
        if count == "":
            n = 0
        values = _initialiser(init, st, self.file) if init else ()
        # a byte array with an alignment (nvcc declares `__shared__ int a[8]` as `.b8 a[32]`):
        # elements of the alignment's size
        if ty == "b8" and n and align in (2, 4, 8) and n % align == 0:
            if values:  # its bytes, little-endian, the missing ones 0 (as the ISA fills them)
                b = list(values) + [0] * (n - len(values))
                values = tuple(int.from_bytes(bytes(x & 0xFF for x in b[i:i + align]), "little")
                               for i in range(0, n, align))
            ty, n = f"b{8 * align}", n // align
        self.variables.append(Variable(name, space, ty, n, values, align, _pos(self.file, st),
                                       byte_array=byte_array))

    def function(self, stmts: list[_Stmt], i: int) -> int:
        st = stmts[i]
        m = re.match(r"^(?:\.(?:visible|weak|extern)\s+)*\.(entry|func)\s*(\(([^)]*)\))?\s*([\w$]+)\s*"
                     r"(?:\(([^)]*)\))?(.*)$", st.text)
        if not m:
            raise ParseError(f"cannot read the function header `{_short(st.text)}`", _pos(self.file, st),
                             None)
        kind, _, rets, name, params, _rest = m.groups()
        fb = _FunctionBuilder(self.file, name, kind == "entry", _params(params or "", st, self.file),
                              _params(rets or "", st, self.file), _pos(self.file, st))
        fb.lines = self.lines
        if _rest.strip():  # .maxntid, .reqnctapercluster, ... (PTX ISA 11.4, 11.7)
            fb.header(_rest, _pos(self.file, st))
        j = _function_end(stmts, i + 1)
        if j is None:
            raise ParseError(f"function {name} has no closing `}}`", _pos(self.file, st), None)
        for s in _scoped(stmts[i + 1:j + 1]):
            if s.kind in ("stmt", "label"):
                fb.statement(s)
        self.functions[name] = fb.build()
        self.checks.append((fb.checked, self.functions[name].reg_types()))
        for v in fb.variables:
            self.variable(v, v.text.split())
        return j + 1


def _function_end(stmts: list[_Stmt], i: int) -> int | None:
    """The index of the ``}`` that closes the function body opening at ``stmts[i]``."""
    depth = 0
    for j in range(i, len(stmts)):
        depth += {"open": 1, "close": -1}.get(stmts[j].kind, 0)
        if depth == 0:
            return j
    return None


def _scoped(body: list[_Stmt]) -> list[_Stmt]:
    """The statements of a function body (its braces included) with the names declared in nested
    ``{ }`` blocks made unique. PTX scopes ``.reg`` declarations and labels to their block, and inline
    asm relies on it: CUTLASS's mbarrier wait, inlined once per call, is
    ``{ .reg .pred P1; LAB_WAIT: mbarrier.try_wait... P1, ...; @P1 bra DONE; bra LAB_WAIT; DONE: }``
    — registers named without ``%`` and labels that repeat in every block. A register declared in
    block k becomes ``%ptxmm.s<k>.NAME`` (ranges ``NAME<N>``: ``NAME0`` .. ``NAME<N-1>``), a label
    ``NAME$ptxmm$s<k>``, inside that block and the blocks it contains (an inner declaration
    shadows an outer one); the function's own block (depth 1) keeps its names."""
    stack: list[int] = []
    chain_of: list[tuple[int, ...]] = []
    names: dict[int, dict[str, str]] = {}
    ranges: dict[int, dict[str, tuple[str, int]]] = {}
    n = 0
    for s in body:  # pass 1: each statement's chain of blocks, and what each block declares
        if s.kind == "open":
            n += 1
            stack.append(n)
        chain_of.append(tuple(stack))
        if s.kind == "close" and stack:
            stack.pop()
        if len(stack) < 2 or s.kind not in ("stmt", "label"):
            continue
        k = stack[-1]
        if s.kind == "label":
            names.setdefault(k, {})[s.text] = f"{s.text}$ptxmm$s{k}"
            continue
        m = re.match(r"^\.reg\s+\.\w+\s+(.*)$", s.text)
        for item in _split_top(m.group(1)) if m else ():
            r = re.match(r"^(%?[\w$]+)<(\d+)>$", item)
            if r:
                new = f"%ptxmm.s{k}.{r.group(1).lstrip('%')}"
                ranges.setdefault(k, {})[r.group(1)] = (new, int(r.group(2)))
            else:
                names.setdefault(k, {})[item] = f"%ptxmm.s{k}.{item.lstrip('%')}"
    out = []
    for s, chain in zip(body, chain_of):
        if s.kind not in ("stmt", "label") or not any(k in names or k in ranges for k in chain):
            out.append(s)
            continue
        ren: dict[str, str] = {}
        rng: dict[str, tuple[str, int]] = {}
        for k in chain:  # outer first: an inner block's declaration wins
            ren.update(names.get(k, {}))
            rng.update(ranges.get(k, {}))
        if s.kind == "label":
            out.append(replace(s, text=ren.get(s.text, s.text)))
        else:
            out.append(replace(s, text=_rename(s.text, ren, rng)))
    return out


def _rename(text: str, ren: dict[str, str], rng: dict[str, tuple[str, int]]) -> str:
    """``text`` (one statement) with the block-scoped names ``ren`` (and register ranges ``rng``)
    replaced where they stand as whole operands or a guard — never inside the mnemonic or its
    qualifiers."""
    def sub(m: re.Match) -> str:
        w = m.group(0)
        if w in ren:
            return ren[w]
        for prefix, (new, count) in rng.items():
            tail = w[len(prefix):]
            if w.startswith(prefix) and tail.isdigit() and int(tail) < count:
                return f"{new}{tail}"
        return w

    token = re.compile(r"(?<![\w$.%])%?[A-Za-z_$][\w$]*(?![\w$])")
    if text.startswith(".reg"):
        head, _, rest = text.partition(" ")
        ty, _, items = rest.partition(" ")
        return f"{head} {ty} " + re.sub(r"(?<![\w$.%])%?[A-Za-z_$][\w$]*",
                                         lambda m: ren.get(m.group(0), rng.get(m.group(0), (m.group(0),))[0]),
                                         items)
    m = re.match(r"^(@!?\S+\s+)?(\S+)(.*)$", text)
    if m is None:
        return text
    guard, mn, rest = m.group(1) or "", m.group(2), m.group(3)
    return token.sub(sub, guard) + mn + token.sub(sub, rest)

def _params(text: str, st: _Stmt, file: str) -> tuple[Param, ...]:
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        m = re.match(r"^\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([\w$]+)(\[\d+\])?$", part)
        if not m:
            raise UnsupportedError(f"parameter `{part}`", _pos(file, st),
                                   "kernel parameters are scalars and pointers")
        size = None
        if m.group(3):  # an aggregate by value: kernels.instantiate takes a CUtensorMap, refuses others
            size = int(m.group(3)[1:-1]) * type_width_bytes(m.group(1))
        out.append(Param(m.group(2), m.group(1), _pos(file, st), size))
    return tuple(out)


def _initialiser(text: str, st: _Stmt, file: str) -> tuple[int, ...]:
    t = text.strip()
    if t.startswith("{"):
        t = t.strip("{} ")
    out = []
    for part in filter(None, (p.strip() for p in t.split(","))):
        try:
            out.append(int_literal(part[:-1] if part.endswith("U") else part))
        except Exception:
            raise UnsupportedError(f"initialiser `{_short(part)}`", _pos(file, st),
                                   "integer initialisers are modelled") from None
    return tuple(out)

def is_module(text: str) -> bool:
    """Whether PTX text is a module (nvcc's output) rather than a litmus test."""
    return bool(re.search(r"^\s*\.(version|target)\b", text, re.M)) and \
        bool(re.search(r"\.entry\b", text)) and not re.search(r"^\s*\.thread\b", text, re.M)

"""PTX modules as nvcc emits them (``nvcc -ptx``): the kernel front end's parser.

A hand-written statement splitter rather than a Lark grammar: a module is a flat sequence of
``;``-terminated statements, labels, scopes ``{ }`` and a few line directives (``.loc``, ``.file``,
``.section``) whose only difficulty is telling a scope brace from a vector or initialiser brace —
one rule does it (a brace opens a scope only at the start of a statement or after a function
header). The splitter keeps, for every statement, its PTX position and the CUDA position of the
``.loc`` in force (inlined code: the line of the call in the kernel's source file).

Instructions are decoded by the litmus front end's decoder (:func:`.instr.decode`: ptxas's
qualifier and operand rules) except for the forms nvcc emits that litmus tests do not use
(:func:`_decode`): ``cvta``, ``cvt``, ``mul.wide``/``mul.hi``, ``mad``, ``abs``, ``bfe``/``bfi``,
``ld.param``/``st.param``, ``ld.global.nc``, ``bar.warp.sync`` and ``call``; these become short
sequences of the IR's own instructions (``Alu``/``Mov``/``Selp``) on scratch registers named
``%ptxmm.*`` — exact machine-integer semantics, no new IR. Warp collectives (``shfl.sync``,
``vote``, ``match``, ``redux``, ``activemask``) are "not supported yet", with their line.

Nothing here knows a launch: :mod:`ptxmm.kernels` instantiates an entry for one."""

from __future__ import annotations

import re
from dataclasses import field, replace
from pathlib import Path

from .._infra.records import record
from ..errors import ParseError, SemanticError, SourcePos, UnsupportedError
from ..ir.program import Addr, Alu, Barrier, Imm, Instruction, Load, Mov, Operand, Reg, Selp, Setp, Sym
from ..syntax.common import int_literal
from ..syntax.decode import Handle, Vec, decode


@record
class KernelPos(SourcePos):
    """A PTX position and, where the module has line information, the CUDA source line it came
    from (``.loc``; for inlined code the line in the kernel's own file)."""

    src: SourcePos | None = None

    def __str__(self) -> str:
        ptx = f"{self.file}:{self.line}:{self.col}"
        return ptx if self.src is None else f"{ptx} ({Path(self.src.file).name}:{self.src.line})"


@record
class Variable:
    """A ``.global``/``.shared``/``.const`` declaration: ``count`` elements of ``type`` (None: a
    scalar), initial values (missing ones are 0)."""

    name: str
    space: str  # global shared const
    type: str  # element type without its dot (a .b8 array with .align A: A-byte words)
    count: int | None
    init: tuple[int, ...] = ()
    align: int = 0
    pos: SourcePos | None = None
    dynamic: bool = False  # `.extern .shared .b8 s[]` (extern __shared__): sized by the launch
    # declared `.b8 name[N]` (how nvcc declares every array): ptxmm.kernels gives it the element width
    # its accesses use (Variable.as_width); ``type`` is the alignment's guess
    byte_array: bool = False

    def as_width(self, nbytes: int) -> Variable:
        """A byte array as an array of ``nbytes``-byte words (its initial bytes little-endian, the
        missing ones 0, as the ISA fills them); itself when that does not divide its size."""
        if not self.byte_array or not self.count or self.dynamic:
            return self
        size = self.count * type_width_bytes(self.type)
        if size % nbytes:
            return self
        raw = self.bytes()
        init = tuple(int.from_bytes(bytes(raw[i:i + nbytes]), "little") for i in range(0, len(raw), nbytes))
        return replace(self, type=f"b{8 * nbytes}", count=size // nbytes, init=init)

    def bytes(self) -> list[int]:
        """The initial bytes (little-endian elements, the missing ones 0)."""
        w = type_width_bytes(self.type)
        n = self.count or 1
        vals = list(self.init) + [0] * (n - len(self.init))
        return [b for v in vals for b in (v & ((1 << 8 * w) - 1)).to_bytes(w, "little")]


def type_width_bytes(ty: str) -> int:
    return 1 if ty == "pred" else int(ty[1:]) // 8


@record
class Param:
    name: str
    type: str  # u64 s32 ... (no dot)
    pos: SourcePos | None = None
    # an aggregate passed by value (`.param .align 128 .b8 k_param_0[128]`, a `const __grid_constant__
    # CUtensorMap`): its size in bytes; None for a scalar or pointer
    size: int | None = None


@record
class Call:
    """``call{.uni} (rets), callee, (args);`` before inlining."""

    callee: str
    rets: tuple[str, ...]
    args: tuple[str, ...]
    pos: SourcePos | None = None
    text: str = ""
    guard: tuple | None = None


@record
class ParamStore:
    """``st.param.T [name+off], v`` (an argument of a call or a function's return value)."""

    name: str
    src: Operand
    type: str
    pos: SourcePos | None = None
    text: str = ""


@record
class Function:
    name: str
    entry: bool
    params: tuple[Param, ...]
    rets: tuple[Param, ...]
    body: tuple  # Instruction | Call | ParamStore
    regs: tuple[tuple[str, str, int | None], ...]  # (name or prefix, type, range size or None)
    pos: SourcePos | None = None

    def declares(self, reg: str) -> bool:
        for name, _ty, n in self.regs:
            if n is None and reg == name:
                return True
            if n is not None and reg.startswith(name) and reg[len(name):].isdigit() \
                    and int(reg[len(name):]) < n:
                return True
        return False

    def reg_types(self) -> dict[str, str]:
        """The declared type of each declared register (ranges expanded)."""
        out: dict[str, str] = {}
        for name, ty, n in self.regs:
            if n is None:
                out[name] = ty
            else:
                out.update({f"{name}{i}": ty for i in range(n)})
        return out


@record
class Module:
    file: str
    functions: dict[str, Function]
    variables: tuple[Variable, ...]
    version: str = ""
    target: str = ""
    address_size: int = 64
    directives: tuple[tuple[str, SourcePos], ...] = ()  # `// ptxmm: ...` lines
    notes: tuple = field(default=(), compare=False)

    @property
    def entries(self) -> list[Function]:
        return [f for f in self.functions.values() if f.entry]


# ----- statements --------------------------------------------------------------------------------

@record(frozen=False)
class _Stmt:
    kind: str  # "stmt" "label" "open" "close"
    text: str
    line: int
    col: int
    src: SourcePos | None


_DIRECTIVE = re.compile(r"//\s*ptxmm:\s*(.*)$")
_LABEL = re.compile(r"^[A-Za-z_$%][\w$]*$")
_HEADER = re.compile(r"^(\.(visible|extern|weak|entry|func)\b)")


class _Splitter:
    """Text → statements; `.loc`/`.file` tracked, `.section` (debug information) skipped."""

    def __init__(self, text: str, file: str):
        self.text, self.file = text, file
        self.files: dict[int, str] = {}
        self.loc: tuple[int, int] | None = None  # (file number, line) in the kernel's own file
        self.main: int | None = None
        self.directives: list[tuple[str, SourcePos]] = []
        self.out: list[_Stmt] = []

    def directives_only(self) -> list[tuple[str, SourcePos]]:
        """The ``// ptxmm:`` lines of a source file (a .cu)."""
        out = []
        for ln, line in enumerate(self.text.splitlines(), 1):
            m = _DIRECTIVE.search(line)
            if m and line.lstrip().startswith("//"):
                out.append((m.group(1).strip(), SourcePos(self.file, ln, line.find("ptxmm") + 1)))
        return out

    def run(self) -> list[_Stmt]:
        self.buf: list[str] = []
        self.start: tuple[int, int] | None = None
        self.in_section, self.depth = False, 0  # a .section being skipped; its open braces
        in_comment = False
        for ln, raw in enumerate(self.text.splitlines(), 1):
            line = raw
            if in_comment:
                end = line.find("*/")
                if end < 0:
                    continue
                line, in_comment = " " * (end + 2) + line[end + 2:], False
            m = _DIRECTIVE.search(line)
            if m and line.lstrip().startswith("//"):
                self.directives.append((m.group(1).strip(),
                                        SourcePos(self.file, ln, line.find("ptxmm") + 1)))
            line, in_comment = _strip_comments(line)
            if not self.directive_line(line.strip(), line, ln):
                self.characters(line, ln)
        if "".join(self.buf).strip():
            self.emit("stmt", "".join(self.buf), self.start)
        return self.out

    def directive_line(self, s: str, line: str, ln: int) -> bool:
        """A line that is not split into statements: debug sections (skipped), .loc, .file, and
        the module directives written without a `;`."""
        if self.in_section:
            self.depth += s.count("{") - s.count("}")
            self.in_section = not (self.depth <= 0 and "}" in s)
            return True
        if s.startswith(".section"):
            self.depth = s.count("{") - s.count("}")
            self.in_section = not ("{" in s and self.depth <= 0)
            return True
        if s.startswith(".loc"):
            self.dot_loc(s, ln)
            return True
        if s.startswith(".file"):
            self.dot_file(s)
            return True
        if s.startswith((".version", ".target", ".address_size")) and not "".join(self.buf).strip():
            self.emit("stmt", s.rstrip(";"), (ln, line.find(s[0]) + 1))
            return True
        return False

    def characters(self, line: str, ln: int) -> None:
        for i, ch in enumerate(line):
            if self.start is None and not ch.isspace():
                self.start = (ln, i + 1)
            text = "".join(self.buf)
            if ch == ";":
                self.flush("stmt")
            elif ch == "{" and self.opens_scope(text):
                if text.strip():
                    self.flush("stmt")
                self.out.append(_Stmt("open", "{", ln, i + 1, None))
                self.buf, self.start = [], None
            elif ch == "}" and not text.strip():
                self.out.append(_Stmt("close", "}", ln, i + 1, None))
                self.buf, self.start = [], None
            elif ch == ":" and _LABEL.match(text.strip() or "-") and line[i + 1:i + 2] != ":" \
                    and line[i - 1:i] != ":":
                self.flush("label")
            else:
                self.buf.append(ch)
        self.buf.append(" ")

    def flush(self, kind: str) -> None:
        self.emit(kind, "".join(self.buf), self.start)
        self.buf, self.start = [], None

    @staticmethod
    def opens_scope(buf: str) -> bool:
        s = buf.strip()
        return not s or bool(_HEADER.match(s)) and "=" not in s

    def emit(self, kind: str, text: str, start) -> None:
        text = " ".join(text.split())
        if not text:
            return
        line, col = start if start else (0, 0)
        src = None
        if self.loc is not None and self.loc[0] in self.files:
            src = SourcePos(self.files[self.loc[0]], self.loc[1], 1)
        self.out.append(_Stmt(kind, text, line, col, src))

    def dot_loc(self, s: str, ln: int) -> None:
        """``.loc F L C{, function_name X, inlined_at F2 L2 C2}``: the line in the kernel's file
        (the file of the first ``.loc`` not inlined) stays the CUDA position."""
        m = re.match(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)$", s)
        if not m:
            return
        f, line = int(m.group(1)), int(m.group(2))
        inl = re.search(r"inlined_at\s+(\d+)\s+(\d+)", m.group(4))
        if inl is None:
            if self.main is None:
                self.main = f
            if f == self.main:
                self.loc = (f, line)
        elif int(inl.group(1)) == self.main:
            self.loc = (self.main, int(inl.group(2)))

    def dot_file(self, s: str) -> None:
        m = re.match(r'\.file\s+(\d+)\s+"([^"]*)"', s)
        if m:
            self.files[int(m.group(1))] = m.group(2)


def _strip_comments(line: str) -> tuple[str, bool]:
    """The line without ``//`` and ``/* */`` comments (outside strings); whether a block comment
    stays open at its end."""
    out, i, in_str = [], 0, False
    while i < len(line):
        two = line[i:i + 2]
        if line[i] == '"':
            in_str = not in_str
        if not in_str and two == "//":
            break
        if not in_str and two == "/*":
            end = line.find("*/", i + 2)
            if end < 0:
                return "".join(out), True
            out.append(" " * (end + 2 - i))
            i = end + 2
            continue
        out.append(line[i])
        i += 1
    return "".join(out), False


# ----- the module --------------------------------------------------------------------------------

def parse(text: str, file: str = "<string>") -> Module:
    """A PTX module: its functions (bodies decoded), its variables and its ``// ptxmm:`` lines."""
    sp = _Splitter(text, file)
    stmts = sp.run()
    # .file lines usually follow the code that uses them: resolve the CUDA positions afterwards
    stmts = _late_files(text, file, stmts, sp)
    b = _ModuleBuilder(file)
    i = 0
    while i < len(stmts):
        i = b.top(stmts, i)
    return Module(file, b.functions, tuple(b.variables), b.version, b.target, b.address_size,
                  tuple(sp.directives), tuple(b.notes))


def _late_files(text: str, file: str, stmts: list[_Stmt], sp: _Splitter) -> list[_Stmt]:
    """Statements re-split once every ``.file`` is known (nvcc writes them after the code)."""
    if not sp.files or all(s.src is not None for s in stmts if s.kind == "stmt") or sp.main is None:
        return stmts
    again = _Splitter(text, file)
    again.files = dict(sp.files)
    return again.run()


def _pos(file: str, st: _Stmt, col_off: int = 0) -> KernelPos:
    return KernelPos(file, st.line, st.col + col_off, st.src)


_SPACES = {".global": "global", ".shared": "shared", ".const": "const", ".local": "local"}


class _ModuleBuilder:
    def __init__(self, file: str):
        self.file = file
        self.functions: dict[str, Function] = {}
        self.variables: list[Variable] = []
        self.version = self.target = ""
        self.address_size = 64
        self.notes: list = []

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
        j = _function_end(stmts, i + 1)
        if j is None:
            raise ParseError(f"function {name} has no closing `}}`", _pos(self.file, st), None)
        for s in _scoped(stmts[i + 1:j + 1]):
            if s.kind in ("stmt", "label"):
                fb.statement(s)
        self.functions[name] = fb.build()
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


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[:n - 3] + "..."


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


# ----- operands ----------------------------------------------------------------------------------

_INT = re.compile(r"^[+-]?(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)U?$")
_FLOAT = re.compile(r"^[+-]?(0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?)$")


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
    if s.startswith("{") and s.endswith("}"):
        return Vec(tuple(_operand(x, pos) for x in _split_top(s[1:-1])))
    if s.startswith("%") or s.startswith("!%"):
        return Reg(s)
    if _INT.match(s):
        return Imm(int_literal(s[:-1] if s.endswith("U") else s))
    if _FLOAT.match(s):
        raise UnsupportedError(f"floating-point constant {s}", pos,
                               "ptxmm models integer values: floating-point arithmetic is not modelled yet")
    if re.match(r"^[A-Za-z_$][\w$]*$", s):
        return Sym(s)
    m = re.match(r"^([A-Za-z_$][\w$]*)\+(\d+)$", s)  # `name+4` as a value (generic address)
    if m:
        return ("symoff", m.group(1), int(m.group(2)))
    raise ParseError(f"cannot read the operand `{s}`", pos, None)


# ----- function bodies ---------------------------------------------------------------------------

WARP_COLLECTIVES = {"shfl", "vote", "match", "redux", "activemask", "elect", "wmma", "mma", "ldmatrix",
                    "stmatrix", "wgmma"}
_SCRATCH = "%ptxmm."


class _FunctionBuilder:
    def __init__(self, file: str, name: str, entry: bool, params, rets, pos):
        self.file, self.name, self.entry = file, name, entry
        self.params, self.rets, self.pos = params, rets, pos
        self.body: list = []
        self.variables: list[_Stmt] = []  # declarations of the module's, written inside the function
        self.regs: list[tuple[str, str, int | None]] = []
        self.tmp = 0

    def build(self) -> Function:
        return Function(self.name, self.entry, self.params, self.rets, tuple(_bulk_sizes(self.body)),
                        tuple(self.regs), self.pos)

    def statement(self, st: _Stmt) -> None:
        pos = _pos(self.file, st)
        if st.kind == "label":
            from ..ir.program import Label

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
        self.body += _decode(self, mn, ops, mpos, text, guard)


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


_SIGN = {"s": True, "u": False, "b": False}


def _ty(t: str) -> tuple[int, bool]:
    return (1 if t == "pred" else int(t[1:])), t[0] == "s"


def _decode(fb: _FunctionBuilder, mn: str, ops: list, pos: KernelPos, text: str, guard) -> list:
    """One nvcc instruction → IR instructions (most through the litmus decoder)."""
    base, *quals = mn.split(".")
    c = dict(pos=pos, text=" ".join(text.split()), guard=guard)
    if base in WARP_COLLECTIVES:
        raise UnsupportedError(f"warp-collective instruction `{mn}`", pos,
                               "ptxmm models each CUDA thread on its own: shfl, vote, match, redux "
                               "and activemask are not modelled yet")
    if any(isinstance(o, tuple) for o in ops):
        raise UnsupportedError(f"an address-plus-offset operand in `{_short(text)}`", pos, None)
    handler = _NVCC.get(base)
    if handler is not None:
        out = handler(fb, quals, ops, c)
        if out is not None:
            return out
    if base in ("ld", "st", "atom", "red") and "param" in quals:
        raise UnsupportedError(f"`{mn}`", pos, "parameters are read with ld.param")
    for o in ops:  # `!%p` (a negated predicate operand) is not an IR operand
        if isinstance(o, Reg) and o.name.startswith("!"):
            raise UnsupportedError(f"negated predicate operand {o.name} in `{mn}`", pos, None)
    if base in _ORDERED:
        mn = _canonical(base, quals)
    return [decode(mn, ops, pos, c["text"], guard)]


# ptxas accepts the qualifiers of ld/st/atom/red in any order (libcu++ writes
# `atom.cas.acquire.gpu.b32`, CUTLASS `ld.global.acquire.gpu.b32`); the litmus decoder checks the
# ISA's order, so a kernel's are put in it first: semantics, scope, state space, cache hints, operation,
# vector, type
_ORDERED = {"ld", "st", "atom", "red"}
_RANK = {**{q: 0 for q in ("weak", "relaxed", "acquire", "release", "acq_rel", "sc", "volatile", "mmio")},
         **{q: 1 for q in ("cta", "cluster", "gpu", "sys")},
         **{q: 2 for q in ("global", "shared", "shared::cta", "shared::cluster", "const", "local", "param")},
         **{q: 4 for q in ("add", "inc", "dec", "exch", "cas", "and", "or", "xor", "min", "max")},
         **{q: 5 for q in ("v2", "v4", "v8")}}


def _canonical(base: str, quals: list[str]) -> str:
    """``base`` with ``quals`` in the ISA's order (``mmio.relaxed.sys`` kept together); ``.nc`` (a
    non-coherent load of data read-only for the kernel's lifetime) dropped: a weak load."""
    if "mmio" in quals:
        return ".".join([base, *quals])
    qs = [q for q in quals if not (base == "ld" and q == "nc")]

    def rank(q: str) -> int:
        if q in _RANK:
            return _RANK[q]
        return 6 if re.fullmatch(r"(u|s|b|f)(8|16|32|64)", q) else 3

    return ".".join([base, *sorted(qs, key=rank)])


def _need(ops: list, n: int, form: str, c: dict) -> None:
    if len(ops) != n:
        raise ParseError(f"`{c['text']}` takes {n} operands", c["pos"], f"expected form: {form}")


def _types_of(quals: list[str]) -> list[str]:
    return [q for q in quals if re.fullmatch(r"(u|s|b|f)(8|16|32|64)|pred", q)]


def _param_type(quals: list[str], c: dict, form: str) -> str:
    """The type of an ``ld.param`` / ``st.param``: exactly one of PTX's fundamental types."""
    types = _types_of(quals)
    if len(types) != 1:
        raise ParseError(f"`{c['text']}` needs one type of .u8-.u64, .s8-.s64, .b8-.b64 or .f16-.f64",
                         c["pos"], f"expected form: {form}")
    return types[0]


_FLOAT_QUALS = {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "ftz", "sat", "approx"}


def _no_float(quals: list[str], c: dict) -> None:
    if any(q.startswith("f") and q[1:].isdigit() for q in quals) or \
            any(q in _FLOAT_QUALS for q in quals):
        raise UnsupportedError(f"floating-point or saturating `{c['text'].split()[0]}`", c["pos"],
                               "ptxmm models integer arithmetic only")


def _extend(fb, dst: Reg, src, from_ty: str, to_ty: str, c: dict) -> list[Instruction]:
    """``dst`` (of ``to_ty``) = ``src`` read at ``from_ty`` and converted as cvt does: truncated,
    or zero-/sign-extended by the source type's signedness."""
    fw, fs = _ty(from_ty)
    tw, _ = _ty(to_ty)
    t = fb.scratch()
    out: list[Instruction] = [Mov(dst=t, src=src, type=f"b{fw}", **c)]
    if tw <= fw:
        return out + [Mov(dst=dst, src=t, type=to_ty, **c)]
    if fs:  # sign extension: shift the value to the top of the wider word, then back (arithmetic)
        u = fb.scratch()
        return out + [Alu(op="shl", dst=u, srcs=(t, Imm(tw - fw)), type=f"b{tw}", **c),
                      Alu(op="shr", dst=dst, srcs=(u, Imm(tw - fw)), type=f"s{tw}", **c)]
    return out + [Alu(op="and", dst=dst, srcs=(t, Imm((1 << fw) - 1)), type=f"b{tw}", **c)]


def _cvta(fb, quals, ops, c):
    """``cvta{.to}.{global|shared|const|param}.u64 d, a``: generic and state-space addresses are
    the same numbers in ptxmm's layout (each buffer has one address range), so a move. ``.param``:
    the generic address of a kernel parameter (nvcc's ``mov.b64 %rd, k_param_0; cvta.param.u64``
    for ``&tm`` of a ``__grid_constant__ CUtensorMap``; kernels.Layout gives the map its range)."""
    space = next((q for q in quals if q in ("global", "shared", "const", "local", "param")), None)
    if space in ("local", None):
        raise UnsupportedError(f"`{c['text']}`", c["pos"], "global and shared addresses are modelled")
    ty = (_types_of(quals) or ["u64"])[-1]
    _need(ops, 2, "cvta{.to}.space.u64 d, a", c)
    return [Mov(dst=ops[0], src=ops[1], type=ty, **c)]


def _cvt(fb, quals, ops, c):
    _no_float(quals, c)
    tys = _types_of(quals)
    if len(tys) != 2:
        raise ParseError(f"`{c['text']}` names two types", c["pos"], "cvt.dtype.atype d, a")
    _need(ops, 2, "cvt.dtype.atype d, a", c)
    return _extend(fb, ops[0], ops[1], tys[1], tys[0], c)


def _mul(fb, quals, ops, c):
    _no_float(quals, c)
    tys = _types_of(quals)
    if "wide" in quals:
        _need(ops, 3, "mul.wide.type d, a, b", c)
        ty = tys[0]
        w, s = _ty(ty)
        wide = f"{'s' if s else 'u'}{2 * w}"
        a, b = fb.scratch(), fb.scratch()
        return (_extend(fb, a, ops[1], ty, wide, c) + _extend(fb, b, ops[2], ty, wide, c)
                + [Alu(op="mul", dst=ops[0], srcs=(a, b), type=wide, **c)])
    if "hi" in quals:
        _need(ops, 3, "mul.hi.type d, a, b", c)
        ty = tys[0]
        w, s = _ty(ty)
        wide = f"{'s' if s else 'u'}{2 * w}"
        a, b, p, h = fb.scratch(), fb.scratch(), fb.scratch(), fb.scratch()
        return (_extend(fb, a, ops[1], ty, wide, c) + _extend(fb, b, ops[2], ty, wide, c)
                + [Alu(op="mul", dst=p, srcs=(a, b), type=wide, **c),
                   Alu(op="shr", dst=h, srcs=(p, Imm(w)), type=wide, **c),
                   Mov(dst=ops[0], src=h, type=ty, **c)])
    return None  # mul.lo: the litmus decoder


def _mad(fb, quals, ops, c):
    """``mad.{lo|hi|wide}.type d, a, b, c`` = mul then add (``.wide``: at twice the width)."""
    _no_float(quals, c)
    _need(ops, 4, "mad.lo.type d, a, b, c", c)
    mode = next((q for q in quals if q in ("lo", "hi", "wide")), None)
    if mode is None:
        raise ParseError(f"`{c['text']}` needs .lo, .hi or .wide", c["pos"], None)
    ty = _types_of(quals)[0]
    w, s = _ty(ty)
    p = fb.scratch()
    mul = _mul(fb, [mode, ty] if mode != "lo" else ["lo", ty], [p, ops[1], ops[2]], c) if mode != "lo" \
        else [Alu(op="mul", dst=p, srcs=(ops[1], ops[2]), type=ty, **c)]
    sty = f"{'s' if s else 'u'}{2 * w}" if mode == "wide" else ty
    return mul + [Alu(op="add", dst=ops[0], srcs=(p, ops[3]), type=sty, **c)]


def _abs(fb, quals, ops, c):
    _no_float(quals, c)
    _need(ops, 2, "abs.sN d, a", c)
    ty = _types_of(quals)[0]
    p, n = fb.scratch(), fb.scratch()
    return [Setp(cmp="lt", dst=p, a=ops[1], b=Imm(0), type=ty, **c),
            Alu(op="neg", dst=n, srcs=(ops[1],), type=ty, **c),
            Selp(dst=ops[0], a=n, b=ops[1], p=p, type=ty, **c)]


def _bfe(fb, quals, ops, c):
    """``bfe.type d, a, pos, len`` with constant pos and len (what nvcc emits for bit fields)."""
    _need(ops, 4, "bfe.type d, a, b, c", c)
    ty = _types_of(quals)[0]
    w, s = _ty(ty)
    if not (isinstance(ops[2], Imm) and isinstance(ops[3], Imm)):
        raise UnsupportedError("bfe with a register position or length", c["pos"], None)
    p, n = ops[2].value & 0xFF, ops[3].value & 0xFF
    if n == 0:
        return [Mov(dst=ops[0], src=Imm(0), type=ty, **c)]
    p, n = min(p, w), min(n, w - min(p, w)) if p < w else 0
    if n == 0:  # position past the word: the sign (.s) or 0
        t = fb.scratch()
        return [Alu(op="shr", dst=t, srcs=(ops[1], Imm(w - 1)), type=ty, **c),
                Mov(dst=ops[0], src=t if s else Imm(0), type=ty, **c)]
    t = fb.scratch()
    return [Alu(op="shl", dst=t, srcs=(ops[1], Imm(w - p - n)), type=f"b{w}", **c),
            Alu(op="shr", dst=ops[0], srcs=(t, Imm(w - n)), type=ty, **c)]


def _bfi(fb, quals, ops, c):
    """``bfi.bN f, a, b, pos, len``: a's low len bits inserted into b at pos (constants)."""
    _need(ops, 5, "bfi.type f, a, b, c, d", c)
    ty = _types_of(quals)[0]
    w, _ = _ty(ty)
    if not (isinstance(ops[3], Imm) and isinstance(ops[4], Imm)):
        raise UnsupportedError("bfi with a register position or length", c["pos"], None)
    p, n = ops[3].value & 0xFF, ops[4].value & 0xFF
    if n == 0 or p >= w:
        return [Mov(dst=ops[0], src=ops[2], type=ty, **c)]
    n = min(n, w - p)
    mask = ((1 << n) - 1) << p
    t, u, v = fb.scratch(), fb.scratch(), fb.scratch()
    return [Alu(op="shl", dst=t, srcs=(ops[1], Imm(p)), type=ty, **c),
            Alu(op="and", dst=u, srcs=(t, Imm(mask)), type=ty, **c),
            Alu(op="and", dst=v, srcs=(ops[2], Imm(~mask & ((1 << w) - 1))), type=ty, **c),
            Alu(op="or", dst=ops[0], srcs=(u, v), type=ty, **c)]


def _ld(fb, quals, ops, c):
    if any(q in ("v2", "v4", "v8") for q in quals):
        return _vector(fb, "ld", quals, ops, c)
    if "const" in quals:  # __constant__ data: a load of the const space (kernels.Layout: read-only)
        ld = decode(".".join(["ld"] + ["global" if q == "const" else q for q in quals]), ops, c["pos"],
                    c["text"], c["guard"])
        return [replace(ld, space="const")]
    if "param" not in quals:
        return None
    _need(ops, 2, "ld.param.type d, [p]", c)
    a = ops[1]
    if not isinstance(a, Addr) or not isinstance(a.base, Sym) or a.offset:
        raise UnsupportedError(f"`{c['text']}`", c["pos"], "a parameter is read whole, at offset 0")
    ty = _param_type(quals, c, "ld.param.type d, [p]")
    return [Mov(dst=ops[0], src=Sym(PARAM + a.base.name), type=ty, **c)]


def _st(fb, quals, ops, c):
    if any(q in ("v2", "v4", "v8") for q in quals) and "param" not in quals:
        return _vector(fb, "st", quals, ops, c)
    if "param" not in quals:
        return None
    _need(ops, 2, "st.param.type [p], v", c)
    a = ops[0]
    if not isinstance(a, Addr) or not isinstance(a.base, Sym) or a.offset:
        raise UnsupportedError(f"`{c['text']}`", c["pos"], "a parameter is written whole, at offset 0")
    return [ParamStore(a.base.name, ops[1], _param_type(quals, c, "st.param.type [p], v"), c["pos"],
                       c["text"])]


def _vector(fb, base: str, quals: list[str], ops: list, c: dict) -> list:
    """``ld/st{.weak}{.space}.v2|.v4|.v8.type`` — nvcc's vector accesses (``int4``, and the stores it
    merges: four ``stage[i] = …`` into one ``st.shared.v4.u32``). PTX ISA 8.2.4 (memory operations
    on vector data types): "modelled as a set of equivalent memory operations on scalar data types,
    executed in an unspecified order on the elements in the vector". So: one scalar access per
    element, at the address plus the element's offset, here in element order. That order changes no
    answer for *weak* elements: each element is a different location, and a weak access is morally
    strong with nothing, so no observation edge starts or ends at one — the causality edges
    between elements that program order adds lead only between the instruction's own elements,
    whose other edges are the instruction's program-order ones in either order. Strong (relaxed,
    acquire, release, volatile) vector accesses, whose elements may be observed one by one, are not
    supported yet."""
    n = int(next(q for q in quals if q in ("v2", "v4", "v8"))[1:])
    scalar = [q for q in quals if q not in ("v2", "v4", "v8")]
    vec, addr = ((ops[0], ops[1]) if base == "ld" else (ops[1], ops[0])) if len(ops) == 2 else (None, None)
    if not isinstance(vec, Vec) or len(vec.items) != n or not isinstance(addr, Addr):
        raise ParseError(f"`{c['text']}` takes a vector of {n} and an address", c["pos"],
                         f"{base}.v{n}.type " + ("{d0, ...}, [a]" if base == "ld" else "[a], {v0, ...}"))
    if any(q in ("relaxed", "acquire", "release", "volatile", "mmio", "acq_rel", "sc") for q in scalar):
        raise UnsupportedError(f"a strong vector access `{c['text']}`", c["pos"],
                               "weak vector loads and stores are modelled (one access per element)")
    mn = _canonical(base, scalar)
    width = _ty(_types_of(scalar)[-1])[0] // 8 if _types_of(scalar) else 4
    out: list = []
    for k, item in enumerate(vec.items):
        a = Addr(addr.base, addr.offset + k * width)
        if base == "ld":
            dst = fb.scratch() if item == Sym("_") else item
            out.append(decode(mn, [dst, a], c["pos"], c["text"], c["guard"]))
        else:
            out.append(decode(mn, [a, item], c["pos"], c["text"], c["guard"]))
    return out


def _mbarrier(fb, quals, ops, c):
    """``mbarrier.try_wait{.parity}… p, [a], state|parity, suspendTimeHint`` (CUTLASS's wait): the
    hint bounds how long one try_wait may suspend the thread before it returns; a try_wait that
    returns False is already an execution the model allows, so the hint is dropped."""
    if "try_wait" in quals and len(ops) == 4:
        return [decode(".".join(["mbarrier", *quals]), ops[:3], c["pos"], c["text"], c["guard"])]
    return None


_SIZE_PENDING = "%ptxmm.size:"


def _cp(fb, quals, ops, c):
    """A bulk copy whose size is a register (CUTLASS passes ``"r"(bytes)``; nvcc writes
    ``mov.u32 %r4, 16;`` and ``[%rd], [%r], %r4``): decoded with the register's value once the
    body is read (:func:`_bulk_sizes`). A tensor copy: :func:`_cp_tensor`."""
    if "tensor" in quals:
        return _cp_tensor(quals, ops, c)
    if "bulk" not in quals or any(q in quals for q in ("commit_group", "wait_group")) or len(ops) < 3 \
            or not isinstance(ops[2], Reg):
        return None
    return [_PendingCopy(".".join(["cp", *quals]), tuple(ops), c["pos"], c["text"], c["guard"])]


def _cp_tensor(quals, ops, c):
    """``cp.async.bulk.tensor…`` as CUTLASS's SM90_TMA_LOAD_2D writes it, with
    ``.L2::cache_hint`` and a 64-bit cache-policy operand last (PTX ISA, cp.async.bulk.tensor: "The
    optional qualifier .L2::cache_hint specifies the cache eviction policy that may be used during
    the memory access" — a hint to the cache, no memory-model meaning): the qualifier and its
    operand are dropped, and the litmus decoder reads the rest (:func:`.instr._cp_tensor`, whose
    located errors name what is not supported: 3d–5d, im2col, ...)."""
    if "L2::cache_hint" not in quals:
        return None
    if not ops or not isinstance(ops[-1], Reg):
        raise ParseError(f"`{c['text']}`: .L2::cache_hint needs its cache-policy operand last", c["pos"],
                         "[dst], [tensorMap, {c0, c1}], [mbar], policy")
    rest = [q for q in quals if q != "L2::cache_hint"]
    return [decode(".".join(["cp", *rest]), ops[:-1], c["pos"], c["text"], c["guard"])]


@record
class _PendingCopy:
    """A bulk copy whose size operand is a register, until :func:`_bulk_sizes` finds its value."""

    mnemonic: str
    ops: tuple
    pos: SourcePos | None
    text: str
    guard: tuple | None = None


def _bulk_sizes(body: list) -> list:
    """Each :class:`_PendingCopy` decoded with its size register's value: the register must be
    written once in the function, by ``mov`` of a constant (what nvcc makes of a constant size);
    any other size register is a located "not supported yet"."""
    pending = [x for x in body if isinstance(x, _PendingCopy)]
    if not pending:
        return body
    writes: dict[str, list] = {}
    for ins in body:
        dst = getattr(ins, "dst", None)
        if isinstance(dst, Reg):
            writes.setdefault(dst.name, []).append(ins)
    out = []
    for ins in body:
        if not isinstance(ins, _PendingCopy):
            out.append(ins)
            continue
        size = ins.ops[2]
        ws = writes.get(size.name, [])
        if len(ws) != 1 or not isinstance(ws[0], Mov) or not isinstance(ws[0].src, Imm) or ws[0].guard:
            raise UnsupportedError(f"`{ins.text}`: its size {size.name} is not a constant", ins.pos,
                                   "a bulk copy's size register must be set once, to a constant "
                                   "(`mov.u32 %r, 16;`)")
        ops = list(ins.ops)
        ops[2] = ws[0].src
        out.append(decode(ins.mnemonic, ops, ins.pos, ins.text, ins.guard))
    return out


def _bar(fb, quals, ops, c):
    if "warp" not in quals:
        return None
    # bar.warp.sync membermask (__syncwarp): with at most 32 threads a CTA is one warp; the full
    # mask is a barrier of the whole warp — its own barrier resource (id 16, past bar.sync's 0..15)
    _need(ops, 1, "bar.warp.sync membermask", c)
    m = ops[0]
    if not isinstance(m, Imm) or m.value & 0xFFFFFFFF != 0xFFFFFFFF:
        raise UnsupportedError(f"`{c['text']}` with a partial or computed mask", c["pos"],
                               "__syncwarp() of the full warp is modelled")
    return [Barrier(kind="sync", ids=(Imm(WARP_BARRIER),), count=None, **c)]


PARAM = "%param:"
WARP_BARRIER = 16
_NVCC = {"cvta": _cvta, "cvt": _cvt, "mul": _mul, "mad": _mad, "abs": _abs, "bfe": _bfe, "bfi": _bfi,
         "ld": _ld, "st": _st, "bar": _bar, "mbarrier": _mbarrier, "cp": _cp}


def is_module(text: str) -> bool:
    """Whether PTX text is a module (nvcc's output) rather than a litmus test."""
    return bool(re.search(r"^\s*\.(version|target)\b", text, re.M)) and \
        bool(re.search(r"\.entry\b", text)) and not re.search(r"^\s*\.thread\b", text, re.M)


__all__ = ["Call", "Function", "KernelPos", "Module", "Param", "ParamStore", "Variable", "is_module",
           "parse", "PARAM", "Load", "SemanticError"]

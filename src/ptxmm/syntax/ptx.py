"""The ``.ptx`` litmus front end: grammar/ptx.lark → Program, then the semantic check pass
(:mod:`.check`).

Registers are undefined until written; ``.reg .u32 %r1 = 5;`` in a thread declares %r1 and gives
it the value it holds when the thread starts (ptxas takes no initial value in the .reg state
space; this is the litmus extension, as ``P0:r1 = 5`` is in a ``.litmus`` init block).

Proxy aliases (docs/ptx-proxies.md): ``.global .texref t aliases x;`` (texture proxy),
``.global .surfref s aliases x;`` (surface proxy), ``.const .u32 c aliases x;`` (constant proxy).
Once names resolve, :func:`_check_proxies` makes each access go through the proxy its name was
declared for (as ptxas does) and keeps the litmus-sized texture/surface forms sound: coordinates
are always 0, and the channels of ``tex`` other than the first are never read.

The parser keeps no positions of rules (Lark's ``propagate_positions`` triples the parse time);
every position comes from a token."""

from __future__ import annotations

from dataclasses import field, replace
from functools import cache

from .._infra import larkrt
from .._infra.gcpause import no_gc
from .._infra.larkrt import Token, Tree
from .._infra.records import record
from ..errors import ParseError, SemanticError, SourcePos, UnsupportedError
from ..ir import mbarrier
from ..ir.program import (
    MEMORY_INSTRS,
    Addr,
    Condition,
    Imm,
    Instruction,
    Label,
    Location,
    MemRef,
    Mov,
    Placement,
    Program,
    Reg,
    RegRef,
    Sym,
    TensorCopy,
    TensorMap,
    Thread,
    cond_refs,
    operands,
    type_width,
    value_operands,
)
from . import check, lark_errors
from .common import build_cond, expectation, int_literal
from .decode import Handle, Vec, decode
from .ptx_fast import parse_fast


@cache
def _parser() -> larkrt.Lark:
    from .._infra.lark_build import build

    return build("ptx.lark", parser="lalr", maybe_placeholders=False)


def parse(text: str, file: str = "<string>") -> Program:
    with no_gc():
        tree = parse_fast(text)  # the plainest files without Lark: the same tree
        if tree is None:
            try:
                tree = _parser().parse(text)
            except larkrt.LarkError as e:
                raise lark_errors.convert(e, file, text) from None
        return _Builder(file, text).build(tree)


def cond_ref(t: Tree) -> RegRef | MemRef:
    """A condition's reference: ``T1:%r0``, a location ``x``, or an element ``out[2]`` (a kernel
    buffer's: its location is named so)."""
    if t.data == "regref":
        return RegRef(str(t.children[0]), str(t.children[1]))
    if t.data == "elemref":
        return MemRef(f"{t.children[0]}[{int(str(t.children[1]))}]")
    return MemRef(str(t.children[0]))


def condition(quant: str, text: str, at: SourcePos | None = None) -> Condition:
    """A condition alone, ``quant`` (exists, forall, ~exists) over ``text`` (``out[0] == 1 &&
    x[1] != 2``), read by this grammar's condition rule; errors located from ``at``, where the
    text stands (a kernel's ``// ptxmm:`` line), else in ``<condition>`` (an option's text)."""
    prefix = f"{quant} "
    whole = prefix + text
    try:
        tree = _parser().parse(whole)
    except larkrt.LarkError as e:
        err = lark_errors.convert(e, "<condition>", whole)
        raise ParseError(err.message, _shifted(err.pos, at, len(prefix)), err.hint) from None
    items = [c for c in tree.children if isinstance(c, Tree)]
    if len(items) != 1 or items[0].data != "condition":
        raise ParseError("expected a condition", at, "e.g. exists out[0] == 1 && out[1] != 2")
    expr = build_cond(items[0].children[1], cond_ref, lambda t: _int(t, "<condition>"))
    return Condition(quant, expr, f"{quant} ({' '.join(text.split())})")  # type: ignore[arg-type]


def _shifted(pos: SourcePos | None, at: SourcePos | None, skip: int) -> SourcePos | None:
    """A position in ``prefix + text`` (line 1) as one in the text, which stands at ``at``."""
    if pos is None:
        return at
    col = max(1, pos.col - skip)
    return SourcePos(at.file, at.line, at.col + col - 1) if at is not None else SourcePos(pos.file, 1, col)


# the declaration forms of proxy aliases: reference types (.global) and the constant state space
_HANDLE_PROXY = {".texref": "texture", ".surfref": "surface"}
_HOW = {"texture": "tex.1d.v4.s32.s32 {{%r0, _, _, _}}, [{name}, {{0}}]",
        "surface": "suld.b.1d.b32.trap {{%r0}}, [{name}, {{0}}] / sust.b.1d.b32.trap [{name}, {{0}}], "
                   "{{%r0}}",
        "constant": "ld.const.u32 %r0, [{name}]"}
_DECL = {"texture": ".global .texref {name} aliases {target};",
         "surface": ".global .surfref {name} aliases {target};",
         "constant": ".const .u32 {name} aliases {target};"}


@record(frozen=False)
class _ThreadNotes:
    """What the IR does not keep of a proxy instruction's operands, for _check_proxies:
    register coordinates, and the tex destinations other than the first (unspecified values)."""

    coords: list[tuple[Reg, Instruction]] = field(default_factory=list)
    unspecified: list[tuple[Reg, Instruction]] = field(default_factory=list)


def _int(tok_tree, file: str = "<string>") -> int:
    return _int_at(tok_tree, file)[0]


def _int_at(tok_tree, file: str) -> tuple[int, SourcePos | None]:
    """An integer literal (``int_lit`` tree or token) and the position of its first character."""
    toks = [t for t in tok_tree.children] if isinstance(tok_tree, Tree) else [tok_tree]
    sign = -1 if toks[0] == "-" else 1
    last = toks[-1]
    pos = SourcePos(file, last.line, last.column) if getattr(last, "line", None) else None
    first = toks[0]
    start = SourcePos(file, first.line, first.column) if getattr(first, "line", None) else pos
    return sign * int_literal(_digits(str(last)), pos), start


def _digits(text: str) -> str:
    """An integer constant without PTX's unsigned suffix ``U`` (``1U``, ``0xFFU``)."""
    return text[:-1] if text.endswith("U") else text


def _tok_pos(file: str, tok: Token) -> SourcePos:
    return SourcePos(file, tok.line, tok.column)


def _reg_decl(node: Tree, file: str) -> tuple[list[tuple[str, str]], list[tuple[str, int]]]:
    """``.reg .u32 %r<3>, %p = 1;`` → ([(%r0, u32), (%r1, u32), (%r2, u32), (%p, u32)],
    [(%p, 1)]): the declared registers and the initial values."""
    ty_tok, *items = node.children
    ty = str(ty_tok)
    if ty in _HANDLE_PROXY:
        raise UnsupportedError(f"{ty} registers", _tok_pos(file, ty_tok),
                               f"declare the reference at file level: `.global {ty} NAME aliases X;`")
    out, init = [], []
    for item in items:
        tok, *val = item.children
        d = str(tok)
        if d.endswith(">"):
            base, n = d[:-1].split("<")
            if val:
                raise ParseError(f"an initial value needs one register, not the range {d}",
                                 _tok_pos(file, tok), f"declare it apart: `.reg {ty} {base}0 = ...;`")
            if int(n) > check.MAX_REG_RANGE:
                raise SemanticError(f"{d} declares {n} registers, more than the limit of "
                                    f"{check.MAX_REG_RANGE}", _tok_pos(file, tok),
                                    "litmus tests are small: declare the registers the thread uses")
            out += [(f"{base}{i}", ty[1:]) for i in range(int(n))]
            continue
        out.append((d, ty[1:]))
        if val:
            value, pos = _int_at(val[0], file)
            check.check_init_value(value, ty[1:], f"register {d}", pos)
            init.append((d, value))
    return out, init


def _declares(item: str, reg: str) -> bool:
    """Whether the item ``%r`` or ``%r<4>`` of a ``.reg`` declaration declares ``reg``."""
    if "<" not in item:
        return item == reg
    base, n = item[:-1].split("<")
    return reg.startswith(base) and reg[len(base):].isdigit() and int(reg[len(base):]) < int(n)


def _span(node: Tree) -> tuple[Token, Token]:
    """The first and the last token of a subtree (without recursion)."""
    first = last = None
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Token):
            first = first or n
            last = n
        else:
            stack += reversed(n.children)
    assert first is not None and last is not None
    return first, last


MAX_ARRAY = 64  # elements of a litmus array (each a location)


class _Builder:
    def __init__(self, file: str, text: str):
        self.arrays: dict[str, tuple[int, int]] = {}  # array name → (elements, bits per element)
        self.file = file
        self.text = text
        self.notes: dict[str, _ThreadNotes] = {}
        self.sources = check.Sources()

    def pos(self, meta_or_tok) -> SourcePos:
        return SourcePos(self.file, meta_or_tok.line, meta_or_tok.column)

    def build(self, tree: Tree) -> Program:
        name, desc, expect_tok = None, "", None
        live = self.expect_liveness(tree)
        locs: list[Location] = []
        threads: list[Thread] = []
        cond: Condition | None = None
        n_threads = sum(1 for item in tree.children if item.data == "thread")
        # arrays first: a thread may name one declared after it
        self.arrays = {str(i.children[2]): (self.array_count(i), type_width(str(i.children[1])[1:]))
                       for i in tree.children if i.data == "array_location"}
        if n_threads > check.MAX_THREADS:
            last = [i for i in tree.children if i.data == "thread"][check.MAX_THREADS]
            check.check_thread_count(n_threads, self.pos(last.children[0]))
        for item in tree.children:
            kind = item.data
            if kind == "test_decl":
                name = str(item.children[0])
                if len(item.children) > 1:
                    desc = str(item.children[1])[1:-1]
            elif kind == "expect_decl":
                expect_tok = self.expect(item, expect_tok)
            elif kind in ("location", "alias_location", "mbar_location", "array_location",
                          "tmap_location"):
                locs += self.declaration(item)
            elif kind == "thread":
                threads.append(self.thread(item, len(threads)))
            elif kind == "condition":
                if cond is not None:
                    raise ParseError("a test has one condition", self.pos(item.children[0]),
                                     "combine them with && or ||")
                cond = self.condition(item)
        if name is None:
            from pathlib import Path

            name = Path(self.file).stem if self.file != "<string>" else "test"
        expect = (expectation(str(expect_tok), cond, self.pos(expect_tok))
                  if expect_tok is not None else None)
        prog = Program(name=name, description=desc, threads=tuple(threads), locations=tuple(locs),
                       condition=cond, expect=expect, file=self.file, format="ptx",
                       expect_liveness=live)
        prog = _with_handle_types(prog)
        return check.check(prog, self.sources, self.front_end)

    def front_end(self, p: Program) -> None:
        """The .ptx front end's own checks, once names resolve: the proxies (their messages are
        the more specific), then operands as ptxas checks them."""
        _check_proxies(p, self.notes)
        check.check_operands(p, self.sources)

    def expect(self, item: Tree, before: Token | None) -> Token:
        tok = item.children[0]
        if before is not None:
            raise SemanticError(f"a second .expect ({tok}; the first, line {before.line}, says "
                                f"{before})", self.pos(tok),
                                "a test has one expectation: delete one of them")
        return tok

    def expect_liveness(self, tree: Tree) -> bool | None:
        """``.expect-liveness terminates|hangs`` → whether no execution hangs
        (Program.expect_liveness; ``ptxmm test --liveness`` compares it), None when the test does
        not say."""
        toks = [item.children[0] for item in tree.children if item.data == "expect_liveness_decl"]
        if len(toks) > 1:
            raise SemanticError("a second .expect-liveness", self.pos(toks[1]), "delete one of them")
        for tok in toks:
            if str(tok) not in ("terminates", "hangs"):
                raise ParseError(f".expect-liveness {tok}: expected terminates or hangs", self.pos(tok),
                                 "`.expect-liveness terminates` (no execution hangs) or `hangs`")
        return str(toks[0]) == "terminates" if toks else None

    def location(self, item: Tree) -> Location:
        space_tok, type_tok, name_tok, *rest = item.children
        space, ty = str(space_tok), str(type_tok)
        proxy = _HANDLE_PROXY.get(ty, "constant" if space == ".const" else "generic")
        if proxy != "generic":
            self.proxy_declaration(item, proxy)
        if ty == ".tensormap":
            raise SemanticError(f"tensor map {name_tok} needs its contents", self.pos(name_tok),
                                f"write `.global .tensormap {name_tok} = tensormap(a, dims {{4}}, "
                                "box {2});`")
        if item.data == "alias_location":
            # a texture/surface reference has no data type: _with_handle_types gives it its target's
            return Location(str(name_tok), "shared" if space.startswith(".shared") else "global",
                            "u32" if ty in _HANDLE_PROXY else ty[1:], 0, alias_of=str(rest[0]),
                            proxy=proxy, pos=self.pos(name_tok))
        init = 0
        if rest:
            init, at = _int_at(rest[0], self.file)
            check.check_init_value(init, ty[1:], f"location {name_tok}", at)
        return Location(str(name_tok), "shared" if space.startswith(".shared") else "global",
                        ty[1:], init, pos=self.pos(name_tok))

    def declaration(self, item: Tree) -> list[Location]:
        """The locations one declaration declares (an array: one per element)."""
        if item.data == "array_location":
            return self.array_location(item)
        if item.data == "tmap_location":
            return [self.tmap_location(item)]
        return [self.mbar_location(item) if item.data == "mbar_location" else self.location(item)]

    def tmap_location(self, item: Tree) -> Location:
        """``.global .tensormap tm = tensormap(a, dims {4, 2}, box {2, 2});``: a tensor map over the
        global .b32 array ``a`` (a litmus form of what cuTensorMapEncodeTiled makes on the host;
        docs/hopper.md). The location holds the map's global address, a's."""
        space_tok, type_tok, name_tok, fn_tok, arr_tok, *fields = item.children
        form = f"`.global .tensormap {name_tok} = tensormap(a, dims {{4, 2}}, box {{2, 2}});`"
        if str(fn_tok) != "tensormap":
            raise ParseError(f"unknown initialiser {fn_tok}(...)", self.pos(fn_tok),
                             f"a tensor map is declared {form}")
        if str(type_tok) != ".tensormap" or str(space_tok) != ".global":
            raise SemanticError(f"a tensor map is a .global .tensormap location, not {space_tok} "
                                f"{type_tok}", self.pos(space_tok), f"write {form}")
        arr = str(arr_tok)
        if arr not in self.arrays or self.arrays[arr][1] != 32:
            raise SemanticError(f"tensor map {name_tok} maps {arr}, which is not a 32-bit array",
                                self.pos(arr_tok), f"declare `.global .b32 {arr}[8];` and write {form}")
        got: dict[str, tuple[int, ...]] = {}
        for f in fields:
            key, *vals = f.children
            if str(key) not in ("dims", "box") or str(key) in got:
                raise ParseError(f"tensormap field {key}", self.pos(key),
                                 f"a tensor map names dims {{…}} and box {{…}} once each: {form}")
            got[str(key)] = tuple(_int(v, self.file) for v in vals)
        if set(got) != {"dims", "box"} or len(got["dims"]) != len(got["box"]) or \
                len(got["dims"]) > 2 or min(got["dims"] + got["box"]) < 1:
            raise SemanticError(f"tensor map {name_tok} needs dims and box of one or two positive "
                                "sizes each, dimension 0 first", self.pos(name_tok), f"write {form}")
        n, need = self.arrays[arr][0], got["dims"][0] * (got["dims"][1] if len(got["dims"]) > 1 else 1)
        if need > n:
            raise SemanticError(f"tensor map {name_tok} has {need} elements, but {arr} holds {n}",
                                self.pos(arr_tok), f"declare `.global .b32 {arr}[{need}];`")
        if got["box"][0] * (got["box"][1] if len(got["box"]) > 1 else 1) > MAX_ARRAY:
            raise SemanticError(f"tensor map {name_tok}: a box of more than {MAX_ARRAY} elements",
                                self.pos(name_tok), "keep the box small")
        return Location(str(name_tok), "global", "b64", 0, pos=self.pos(name_tok),
                        tensormap=TensorMap(arr, got["dims"], got["box"]))

    def array_count(self, item: Tree) -> int:
        space_tok, type_tok, name_tok, n_tok, *_ = item.children
        n = int(_digits(str(n_tok)))
        if not 0 < n <= MAX_ARRAY:
            raise SemanticError(f"array {name_tok}[{n}]: a litmus array has 1 to {MAX_ARRAY} elements",
                                self.pos(n_tok), "each element is a location of its own: keep arrays small")
        if str(type_tok) in (".pred", ".texref", ".surfref", ".tensormap") or str(space_tok) == ".const":
            raise UnsupportedError(f"an array of {space_tok} {type_tok}", self.pos(type_tok),
                                   "arrays are .global or .shared words of a data type, e.g. "
                                   f"`.global .u32 {name_tok}[{n}];`")
        return n

    def array_location(self, item: Tree) -> list[Location]:
        """``.global .u32 a[4] = {1, 2};``: the consecutive words a[0] … a[3] (the locations of its
        elements; values not given are 0, as PTX initialises them); ``[a+4]`` names a[1]."""
        space_tok, type_tok, name_tok, n_tok, *values = item.children
        n, ty = self.array_count(item), str(type_tok)[1:]
        if len(values) > n:
            raise SemanticError(f"array {name_tok}[{n}] is given {len(values)} values",
                                _int_at(values[n], self.file)[1], f"give at most {n} values")
        init = []
        for v in values:
            value, at = _int_at(v, self.file)
            check.check_init_value(value, ty, f"element of {name_tok}", at)
            init.append(value)
        init += [0] * (n - len(init))
        space = "shared" if str(space_tok).startswith(".shared") else "global"
        return [Location(f"{name_tok}[{i}]", space, ty, init[i], pos=self.pos(name_tok)) for i in range(n)]

    def element(self, base_tok: Token, offset: int) -> Sym:
        """The element of array ``base_tok`` at byte ``offset`` (``[a+4]``: a[1]); located errors
        for an offset that is not a whole element or lies outside the array."""
        name = str(base_tok)
        n, w = self.arrays[name]
        i, part = divmod(offset, w // 8)
        if part or not 0 <= i < n:
            raise SemanticError(f"[{name}{offset:+d}]: byte {offset} of {name}[{n}] is "
                                + ("not the start of an element" if part and 0 <= i < n else
                                   "outside the array"), self.pos(base_tok),
                                f"elements are {w // 8} bytes: offsets 0 to {(n - 1) * w // 8} "
                                f"in steps of {w // 8}")
        return Sym(f"{name}[{i}]")

    def mbar_location(self, item: Tree) -> Location:
        """``.shared .b64 bar = mbarrier.init(N);``: an mbarrier object initialised before the
        threads start, as if by ``mbarrier.init [bar], N`` ordered before every thread by the
        CUDA API (docs/hopper.md)."""
        space_tok, type_tok, name_tok, fn_tok, count = item.children
        form = f"`.shared .b64 {name_tok} = mbarrier.init(N);`"
        if str(fn_tok) != "mbarrier.init":
            raise ParseError(f"unknown initialiser {fn_tok}(...)", self.pos(fn_tok),
                             f"a location starts with an integer, or an mbarrier with {form}")
        if not str(space_tok).startswith(".shared") or str(type_tok) != ".b64":
            raise SemanticError(f"an mbarrier object is a .shared .b64 location, not "
                                f"{space_tok} {type_tok}", self.pos(space_tok), f"write {form}")
        n, at = _int_at(count, self.file)
        if not 0 < n < 1 << 16:
            raise SemanticError(f"mbarrier expected count {n} out of range", at,
                                "ptxmm counts arrivals in 16 bits: 1 to 65535")
        return Location(str(name_tok), "shared", "b64", mbarrier.init_count(n), pos=self.pos(name_tok))

    def proxy_declaration(self, item: Tree, proxy: str) -> None:
        """A texture/surface reference or a constant-bank name must alias a data location."""
        space_tok, type_tok, name_tok, *rest = item.children
        space, ty = str(space_tok), str(type_tok)
        target = str(rest[0]) if item.data == "alias_location" else "X"
        if ty in _HANDLE_PROXY and space != ".global":
            raise ParseError(f"a {ty} is declared in the .global state space, not {space}",
                             self.pos(space_tok),
                             f"write `{_DECL[proxy].format(name=name_tok, target=target)}`")
        if ty == ".pred":
            raise ParseError("a .const location holds data, not a predicate", self.pos(type_tok),
                             f"write `.const .u32 {name_tok} aliases {target};`")
        if item.data != "alias_location":
            what = f"{ty} {name_tok}" if ty in _HANDLE_PROXY else f".const location {name_tok}"
            raise UnsupportedError(
                f"{what} must alias a data location", self.pos(name_tok),
                f"write `{_DECL[proxy].format(name=name_tok, target='X')}` after declaring "
                "`.global .u32 X = 0;` (the test reaches X's memory through the "
                f"{proxy} proxy)")

    def thread(self, item: Tree, index: int) -> Thread:
        name_tok, *rest = item.children
        n = sum(1 for ch in rest if ch.data in ("label", "instr"))
        check.check_instr_count(n, str(name_tok), self.pos(name_tok))
        place = {"gpu": 0, "cluster": None, "cta": index}
        instrs: list[Instruction] = []
        reg_types: list[tuple[str, str]] = []
        init: dict[str, int] = {}
        for ch in rest:
            if ch.data == "placement":
                place[str(ch.children[0])[1:]] = int(_digits(str(ch.children[1])))
            elif ch.data == "label":
                tok = ch.children[0]
                instrs.append(Label(name=str(tok), pos=self.pos(tok), text=f"{tok}:"))
            elif ch.data == "instr":
                instrs.append(self.instr(ch, str(name_tok)))
            elif ch.data == "reg_decl":
                regs, values = _reg_decl(ch, self.file)
                self.redeclared(ch, regs, dict(reg_types))
                reg_types += regs
                self.reg_init(ch, values, init)
        return Thread(str(name_tok), index, Placement(**place), tuple(instrs),
                      init_regs=tuple(init.items()), pos=self.pos(name_tok),
                      reg_types=tuple(reg_types))

    def redeclared(self, node: Tree, regs: list[tuple[str, str]], before: dict[str, str]) -> None:
        """A register is declared once (ptxas: "Duplicate definition")."""
        seen = dict(before)
        for reg, ty in regs:
            if reg in seen:
                tok = next((i.children[0] for i in reversed(node.children[1:])
                            if _declares(str(i.children[0]), reg)), node.children[0])
                raise SemanticError(f"register {reg} is declared twice (.{seen[reg]}, then .{ty})",
                                    self.pos(tok), "declare each register once")
            seen[reg] = ty

    def reg_init(self, node: Tree, values: list[tuple[str, int]], init: dict[str, int]) -> None:
        for reg, value in values:
            if reg in init:
                tok = next(i.children[0] for i in node.children[1:] if str(i.children[0]) == reg)
                raise SemanticError(f"register {reg} is given an initial value twice",
                                    self.pos(tok), "give it one `.reg` declaration with a value")
            init[reg] = value

    def instr(self, node: Tree, thread: str) -> Instruction:
        guard = None
        ch = list(node.children)
        if isinstance(ch[0], Tree) and ch[0].data == "guard":
            g = ch.pop(0)
            guard = (Reg(str(g.children[-1])), len(g.children) == 3)
        mn: Token = ch[0]
        trees = ch[1].children if len(ch) > 1 else []
        ops = [self.operand(o) for o in trees]
        # the instruction's own text (several may share a line), without its `;`
        first, last = _span(node)
        end = self.text.find(";", last.end_pos)
        text = " ".join(self.text[first.start_pos:end if end >= 0 else last.end_pos].split())
        ins = decode(str(mn), ops, self.pos(mn), text, guard)
        self.note(thread, ins, ops)
        self.sources.spots[id(ins)] = self.spots(ins, ops, trees, node)
        return ins

    def spots(self, ins: Instruction, ops: list, trees: list, node: Tree) -> list:
        """Where each operand (and the guard's register) is written, for located operand errors."""
        out = [(op, self.pos(_span(t)[0])) for op, t in zip(ops, trees)]
        out += [(op.base, pos) for op, pos in out if isinstance(op, Addr)]  # `[x]`: x's position
        if ins.guard is not None:
            g = node.children[0]
            out.append((ins.guard[0], self.pos(g.children[-1])))
        return out

    def note(self, thread: str, ins: Instruction, ops: list) -> None:
        """Keep what the IR drops of a texture/surface instruction (see _ThreadNotes)."""
        notes = self.notes.setdefault(thread, _ThreadNotes())
        for o in ops:
            if isinstance(o, Handle) and not isinstance(ins, TensorCopy):  # tensor copies: decode/tensor.py
                regs = [x for x in o.coords if isinstance(x, Reg)]
                notes.coords += [(x, ins) for x in regs]
                if regs:
                    self.sources.extra_reads[id(ins)] = regs
            elif isinstance(o, Vec) and getattr(ins, "proxy", None) == "texture":
                notes.unspecified += [(r, ins) for r in o.items[1:] if isinstance(r, Reg)]

    def operand(self, o: Tree):
        if o.data == "reg":
            return Reg(str(o.children[0]))
        if o.data == "imm":
            value, pos = _int_at(o.children[0], self.file)
            check.check_immediate(value, pos)
            return Imm(value)
        if o.data == "sym":  # an array's name is the address of its first element
            return Sym(f"{o.children[0]}[0]" if str(o.children[0]) in self.arrays else str(o.children[0]))
        if o.data == "fimm":
            raise UnsupportedError(f"floating-point constant {''.join(map(str, o.children))}",
                                   _tok_pos(self.file, o.children[0]),
                                   "ptxmm models integer values: floating-point constants and "
                                   "arithmetic are not modelled yet")
        if o.data in ("vector", "pair"):  # `d|p` (elect.sync) as a two-element vector
            return Vec(tuple(self.operand(c) for c in o.children), pair=o.data == "pair")
        base_tok, *rest = o.children[0].children
        base = Reg(str(base_tok)) if str(base_tok).startswith("%") else Sym(str(base_tok))
        offset = 0
        if rest and isinstance(rest[0], Token) and rest[0].type == "SIGN":
            offset = int_literal(_digits(str(rest[1])), _tok_pos(self.file, rest[1])) * \
                (-1 if rest[0] == "-" else 1)
            rest = rest[2:]
        if isinstance(base, Sym) and base.name in self.arrays:
            base, offset = self.element(base_tok, offset), 0
        if not rest:
            return Addr(base, offset)
        coords = rest[0]
        if isinstance(coords, Token):  # `[t, %c]`: a scalar coordinate
            return Handle(Addr(base, offset), (Reg(str(coords)),))
        return Handle(Addr(base, offset), self.operand(coords).items)

    def condition(self, item: Tree) -> Condition:
        q = str(item.children[0])
        check.check_depth(item.children[1], self.file, parens=True)
        expr = build_cond(item.children[1], self.ref, lambda t: _int(t, self.file))
        for node in item.iter_subtrees():
            if node.data == "c_cmp" and isinstance(node.children[2], Tree) and \
                    node.children[2].data == "int_lit":
                value, pos = _int_at(node.children[2], self.file)
                self.sources.consts.append((self.ref(node.children[0]), value, pos))
        return Condition(q, expr, self.source_text(item))  # type: ignore[arg-type]

    def source_text(self, item: Tree) -> str:
        """The condition's text, whitespace normalised: from its quantifier to the last token,
        with the closing parentheses after it."""
        first, last = _span(item)
        start, end = first.start_pos, last.end_pos
        depth = self.text.count("(", start, end) - self.text.count(")", start, end)
        while depth > 0 and end < len(self.text):
            ch = self.text[end]
            if ch == ")":
                depth -= 1
            elif not ch.isspace():
                break
            end += 1
        return " ".join(self.text[start:end].split())

    def ref(self, t: Tree):
        r = cond_ref(t)
        self.sources.refs.setdefault(r, self.pos(t.children[0]))
        return r


def _with_handle_types(p: Program) -> Program:
    """A texture/surface reference gets its target's data type (it declares none)."""
    def fix(loc: Location) -> Location:
        if loc.alias_of is None or loc.proxy not in ("texture", "surface"):
            return loc
        tgt = p.location(p.physical(loc.name))
        return replace(loc, type=tgt.type) if tgt is not None else loc
    return replace(p, locations=tuple(fix(loc) for loc in p.locations))


def _check_proxies(p: Program, notes: dict[str, _ThreadNotes]) -> None:
    """Declarations and accesses agree on the proxy; the litmus-sized forms stay sound."""
    locs = {loc.name: loc for loc in p.locations}
    for loc in p.locations:
        if loc.alias_of is not None:
            _check_alias(p, loc, locs)
    for t in p.threads:
        for ins in t.instrs:
            _check_access(ins, locs)
        n = notes.get(t.name)
        if n is not None:
            _check_coords(t, n)
            _check_unspecified(p, t, n)


def _check_alias(p: Program, loc: Location, locs: dict[str, Location]) -> None:
    tgt = locs[loc.alias_of]
    if tgt.proxy != "generic" and tgt.alias_of is not None:
        raise SemanticError(f"{loc.name} aliases {tgt.name}, which is itself a {tgt.proxy} alias",
                            loc.pos, f"alias the data location {p.physical(tgt.name)} instead")
    phys = locs[p.physical(loc.name)]
    if loc.proxy != "generic" and phys.space != "global":
        raise SemanticError(f"the {loc.proxy} alias {loc.name} names .shared location {phys.name}",
                            loc.pos, "textures, surfaces and the constant bank are global memory: "
                            "alias a .global location")


def _proxy_of(loc: Location) -> str:
    return loc.proxy if loc.alias_of is not None else "generic"


def _check_access(ins: Instruction, locs: dict[str, Location]) -> None:
    """An access goes through the proxy its location was declared for (ptxas: a .texref only in
    tex, a .surfref only in suld/sust/sured, a .const name only in ld.const); the address of a
    proxy alias is not a value."""
    for o in value_operands(ins):
        if isinstance(o, Sym) and o.name in locs and _proxy_of(locs[o.name]) != "generic":
            raise UnsupportedError(f"the address of {locs[o.name].proxy} alias {o.name} as a value",
                                   ins.pos, f"access it with {_HOW[locs[o.name].proxy]}"
                                   .format(name=o.name))
    if not isinstance(ins, MEMORY_INSTRS) or not isinstance(ins.addr.base, Sym):
        return
    loc = locs.get(ins.addr.base.name)
    if loc is not None and loc.tensormap is not None:
        raise UnsupportedError(f"`{ins.text}` accesses tensor map {loc.name} as data", ins.pos,
                               "a tensor map is an opaque object: change it with tensormap.replace."
                               "tile.global_address.global.b1024.b64, use it in cp.async.bulk.tensor")
    if loc is None or _proxy_of(loc) == ins.proxy:
        return
    have, want = _proxy_of(loc), ins.proxy
    alias = f"{loc.name}_{want[:3]}"
    if have == "generic":
        raise SemanticError(f"`{ins.text}` accesses {loc.name} through the {want} proxy, but "
                            f"{loc.name} is not a {want} alias", ins.pos,
                            f"declare `{_DECL[want].format(name=alias, target=loc.name)}` "
                            f"and access {alias}")
    raise SemanticError(f"{loc.name} is a {have} alias; `{ins.text}` accesses memory through the "
                        f"{want} proxy", ins.pos,
                        f"access it with {_HOW[have].format(name=loc.name)}")


def _writes(ins: Instruction) -> Reg | None:
    dst = getattr(ins, "dst", None)
    return dst if isinstance(dst, Reg) else None


def _check_coords(t: Thread, n: _ThreadNotes) -> None:
    """A register coordinate must hold 0 whenever it is used: the thread writes it only with
    `mov` of the constant 0 (or gives it the initial value 0; the register check makes sure it is
    written before it is used)."""
    for reg, use in n.coords:
        if dict(t.init_regs).get(reg.name, 0) != 0:
            raise UnsupportedError(
                f"coordinate {reg.name} of `{use.text}` may be non-zero", use.pos,
                f"a litmus location is one element, at coordinate 0; {reg.name} starts at "
                f"{dict(t.init_regs)[reg.name]}: write the coordinate as {{0}}")
        for ins in t.instrs:
            if _writes(ins) == reg and not (isinstance(ins, Mov) and ins.src == Imm(0)):
                raise UnsupportedError(
                    f"coordinate {reg.name} of `{use.text}` may be non-zero", use.pos,
                    f"a litmus location is one element, at coordinate 0; {reg.name} is written by "
                    f"`{ins.text}` (line {ins.pos.line if ins.pos else '?'}): write the "
                    "coordinate as {0}")


def _check_unspecified(p: Program, t: Thread, n: _ThreadNotes) -> None:
    """tex writes d1..d3 with values the litmus form does not model: nothing may read them."""
    for reg, tex in n.unspecified:
        readers = [ins for ins in t.instrs if reg in _reads(ins)]
        readers += [use for r, use in n.coords if r == reg]
        named = any(isinstance(r, RegRef) and r.reg == reg.name and r.thread in (t.name, str(t.index))
                    for r in (cond_refs(p.condition.expr) if p.condition else []))
        if readers or named:
            where = f"`{readers[0].text}`" if readers else "the condition"
            raise UnsupportedError(
                f"{where} reads {reg.name}, a channel of `{tex.text}` other than the first",
                readers[0].pos if readers else tex.pos,
                "the texture holds one word, returned in the first destination; the other "
                "channels depend on the texture's format: write `_` for them")


def _reads(ins: Instruction) -> set[Reg]:
    regs = {o.base if isinstance(o, Addr) else o for o in operands(ins)}
    if ins.guard is not None:
        regs.add(ins.guard[0])
    return {r for r in regs if isinstance(r, Reg)}


__all__ = ["parse"]

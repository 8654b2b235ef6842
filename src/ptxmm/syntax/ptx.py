"""The ``.ptx`` litmus front end: grammar/ptx.lark → Program.

Proxy aliases (docs/ptx-proxies.md): ``.global .texref t aliases x;`` (texture proxy),
``.global .surfref s aliases x;`` (surface proxy), ``.const .u32 c aliases x;`` (constant proxy).
After check_program, :func:`_check_proxies` makes each access go through the proxy its name was
declared for (as ptxas does) and keeps the litmus-sized texture/surface forms sound: coordinates
are always 0, and the channels of ``tex`` other than the first are never read."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache

import lark
from lark import Token, Tree

from ..errors import ParseError, SemanticError, SourcePos, UnsupportedError
from ..program import (
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
    Thread,
    cond_refs,
    operands,
    value_operands,
)
from ..resources import data_dir
from . import lark_errors
from .common import build_cond, check_program, expectation, int_literal
from .instr import Handle, Vec, decode


@cache
def _parser() -> lark.Lark:
    return lark.Lark((data_dir("grammar") / "ptx.lark").read_text(), parser="lalr", cache=True,
                     propagate_positions=True, maybe_placeholders=False)


def parse(text: str, file: str = "<string>") -> Program:
    try:
        tree = _parser().parse(text)
    except lark.exceptions.LarkError as e:
        raise lark_errors.convert(e, file, text) from None
    return _Builder(file, text).build(tree)


# the declaration forms of proxy aliases: reference types (.global) and the constant state space
_HANDLE_PROXY = {".texref": "texture", ".surfref": "surface"}
_HOW = {"texture": "tex.1d.v4.s32.s32 {{%r0, _, _, _}}, [{name}, {{0}}]",
        "surface": "suld.b.1d.b32.trap {{%r0}}, [{name}, {{0}}] / sust.b.1d.b32.trap [{name}, {{0}}], "
                   "{{%r0}}",
        "constant": "ld.const.u32 %r0, [{name}]"}
_DECL = {"texture": ".global .texref {name} aliases {target};",
         "surface": ".global .surfref {name} aliases {target};",
         "constant": ".const .u32 {name} aliases {target};"}


@dataclass
class _ThreadNotes:
    """What the IR does not keep of a proxy instruction's operands, for _check_proxies:
    register coordinates, and the tex destinations other than the first (unspecified values)."""

    coords: list[tuple[Reg, Instruction]] = field(default_factory=list)
    unspecified: list[tuple[Reg, Instruction]] = field(default_factory=list)


def _int(tok_tree, file: str = "<string>") -> int:
    toks = [t for t in tok_tree.children] if isinstance(tok_tree, Tree) else [tok_tree]
    sign = -1 if toks[0] == "-" else 1
    last = toks[-1]
    pos = SourcePos(file, last.line, last.column) if getattr(last, "line", None) else None
    return sign * int_literal(str(last), pos)


def _reg_decl(node: Tree, file: str) -> list[tuple[str, str]]:
    """``.reg .u32 %r<3>, %p;`` → [(%r0, u32), (%r1, u32), (%r2, u32), (%p, u32)]."""
    ty, *decls = (str(c) for c in node.children)
    if ty in _HANDLE_PROXY:
        tok = node.children[0]
        raise UnsupportedError(f"{ty} registers", SourcePos(file, tok.line, tok.column),
                               f"declare the reference at file level: `.global {ty} NAME aliases X;`")
    out = []
    for d in decls:
        if d.endswith(">"):
            base, n = d[:-1].split("<")
            out += [(f"{base}{i}", ty[1:]) for i in range(int(n))]
        else:
            out.append((d, ty[1:]))
    return out


class _Builder:
    def __init__(self, file: str, text: str):
        self.file = file
        self.lines = text.splitlines()
        self.text = text
        self.notes: dict[str, _ThreadNotes] = {}

    def pos(self, meta_or_tok) -> SourcePos:
        return SourcePos(self.file, meta_or_tok.line, meta_or_tok.column)

    def build(self, tree: Tree) -> Program:
        name, desc, expect_word, expect_pos = None, "", None, None
        locs: list[Location] = []
        threads: list[Thread] = []
        cond: Condition | None = None
        for item in tree.children:
            kind = item.data
            if kind == "test_decl":
                name = str(item.children[0])
                if len(item.children) > 1:
                    desc = str(item.children[1])[1:-1]
            elif kind == "expect_decl":
                expect_word, expect_pos = str(item.children[0]), self.pos(item.meta)
            elif kind in ("location", "alias_location"):
                locs.append(self.location(item))
            elif kind == "thread":
                threads.append(self.thread(item, len(threads)))
            elif kind == "condition":
                if cond is not None:
                    raise ParseError("a test has one condition", self.pos(item.meta),
                                     "combine them with && or ||")
                cond = self.condition(item)
        if name is None:
            from pathlib import Path

            name = Path(self.file).stem if self.file != "<string>" else "test"
        expect = expectation(expect_word, cond, expect_pos) if expect_word else None
        prog = Program(name=name, description=desc, threads=tuple(threads), locations=tuple(locs),
                       condition=cond, expect=expect, file=self.file, format="ptx")
        check_program(prog)
        prog = _with_handle_types(prog)
        _check_proxies(prog, self.notes)
        return prog

    def location(self, item: Tree) -> Location:
        space_tok, type_tok, name_tok, *rest = item.children
        space, ty = str(space_tok), str(type_tok)
        proxy = _HANDLE_PROXY.get(ty, "constant" if space == ".const" else "generic")
        if proxy != "generic":
            self.proxy_declaration(item, proxy)
        if item.data == "alias_location":
            # a texture/surface reference has no data type: _with_handle_types gives it its target's
            return Location(str(name_tok), "shared" if space.startswith(".shared") else "global",
                            "u32" if ty in _HANDLE_PROXY else ty[1:], 0, alias_of=str(rest[0]),
                            proxy=proxy, pos=self.pos(name_tok))
        init = _int(rest[0], self.file) if rest else 0
        return Location(str(name_tok), "shared" if space.startswith(".shared") else "global",
                        ty[1:], init, pos=self.pos(name_tok))

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
        place = {"gpu": 0, "cluster": None, "cta": index}
        instrs: list[Instruction] = []
        reg_types: list[tuple[str, str]] = []
        for ch in rest:
            if ch.data == "placement":
                place[str(ch.children[0])[1:]] = int(ch.children[1])
            elif ch.data == "label":
                tok = ch.children[0]
                instrs.append(Label(name=str(tok), pos=self.pos(tok), text=f"{tok}:"))
            elif ch.data == "instr":
                instrs.append(self.instr(ch, str(name_tok)))
            elif ch.data == "reg_decl":
                reg_types += _reg_decl(ch, self.file)
        return Thread(str(name_tok), index, Placement(**place), tuple(instrs),
                      pos=self.pos(name_tok), reg_types=tuple(reg_types))

    def instr(self, node: Tree, thread: str) -> Instruction:
        guard = None
        ch = list(node.children)
        if isinstance(ch[0], Tree) and ch[0].data == "guard":
            g = ch.pop(0)
            guard = (Reg(str(g.children[-1])), len(g.children) == 2)
        mn: Token = ch[0]
        ops = [self.operand(o) for o in (ch[1].children if len(ch) > 1 else [])]
        # the instruction's own text (several may share a line), without its `;`
        text = " ".join(self.text[node.meta.start_pos:node.meta.end_pos].rstrip(";").split())
        ins = decode(str(mn), ops, self.pos(mn), text, guard)
        self.note(thread, ins, ops)
        return ins

    def note(self, thread: str, ins: Instruction, ops: list) -> None:
        """Keep what the IR drops of a texture/surface instruction (see _ThreadNotes)."""
        notes = self.notes.setdefault(thread, _ThreadNotes())
        for o in ops:
            if isinstance(o, Handle):
                notes.coords += [(x, ins) for x in o.coords if isinstance(x, Reg)]
            elif isinstance(o, Vec) and getattr(ins, "proxy", None) == "texture":
                notes.unspecified += [(r, ins) for r in o.items[1:] if isinstance(r, Reg)]

    def operand(self, o: Tree):
        if o.data == "reg":
            return Reg(str(o.children[0]))
        if o.data == "imm":
            return Imm(_int(o.children[0], self.file))
        if o.data == "sym":
            return Sym(str(o.children[0]))
        if o.data == "vector":
            return Vec(tuple(self.operand(c) for c in o.children))
        base_tok, *rest = o.children[0].children
        base = Reg(str(base_tok)) if str(base_tok).startswith("%") else Sym(str(base_tok))
        offset = 0
        if rest and isinstance(rest[0], Token) and rest[0].type == "SIGN":
            offset = int(str(rest[1])) * (-1 if rest[0] == "-" else 1)
            rest = rest[2:]
        if not rest:
            return Addr(base, offset)
        coords = rest[0]
        if isinstance(coords, Token):  # `[t, %c]`: a scalar coordinate
            return Handle(Addr(base, offset), (Reg(str(coords)),))
        return Handle(Addr(base, offset), self.operand(coords).items)

    def condition(self, item: Tree) -> Condition:
        q = str(item.children[0])
        expr = build_cond(item.children[1], self.ref, lambda t: _int(t, self.file))
        start, end = item.meta.start_pos, item.meta.end_pos
        text = "\n".join(self.lines)[start:end] if start is not None else ""
        return Condition(q, expr, " ".join(text.split()))  # type: ignore[arg-type]

    def ref(self, t: Tree):
        if t.data == "regref":
            return RegRef(str(t.children[0]), str(t.children[1]))
        return MemRef(str(t.children[0]))


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
    """A register coordinate must hold 0 whenever it is used: the thread never writes it (every
    register starts at 0) or writes it only with `mov` of the constant 0."""
    for reg, use in n.coords:
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

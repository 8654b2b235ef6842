"""The ``.ptx`` litmus front end: grammar/ptx.lark → Program."""

from __future__ import annotations

from functools import cache

import lark
from lark import Token, Tree

from ..errors import ParseError, SourcePos
from ..program import (
    Addr,
    Condition,
    Imm,
    Instruction,
    Label,
    Location,
    MemRef,
    Placement,
    Program,
    Reg,
    RegRef,
    Sym,
    Thread,
)
from ..resources import data_dir
from . import lark_errors
from .common import build_cond, check_program, expectation, int_literal
from .instr import decode


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


def _int(tok_tree, file: str = "<string>") -> int:
    toks = [t for t in tok_tree.children] if isinstance(tok_tree, Tree) else [tok_tree]
    sign = -1 if toks[0] == "-" else 1
    last = toks[-1]
    pos = SourcePos(file, last.line, last.column) if getattr(last, "line", None) else None
    return sign * int_literal(str(last), pos)


def _reg_decl(node: Tree) -> list[tuple[str, str]]:
    """``.reg .u32 %r<3>, %p;`` → [(%r0, u32), (%r1, u32), (%r2, u32), (%p, u32)]."""
    ty, *decls = (str(c) for c in node.children)
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
        return prog

    def location(self, item: Tree) -> Location:
        space_tok, type_tok, name_tok, *rest = item.children
        space = "shared" if str(space_tok).startswith(".shared") else "global"
        if item.data == "alias_location":
            return Location(str(name_tok), space, str(type_tok)[1:], 0, alias_of=str(rest[0]),
                            pos=self.pos(name_tok))
        init = _int(rest[0], self.file) if rest else 0
        return Location(str(name_tok), space, str(type_tok)[1:], init, pos=self.pos(name_tok))

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
                instrs.append(self.instr(ch))
            elif ch.data == "reg_decl":
                reg_types += _reg_decl(ch)
        return Thread(str(name_tok), index, Placement(**place), tuple(instrs),
                      pos=self.pos(name_tok), reg_types=tuple(reg_types))

    def instr(self, node: Tree) -> Instruction:
        guard = None
        ch = list(node.children)
        if isinstance(ch[0], Tree) and ch[0].data == "guard":
            g = ch.pop(0)
            guard = (Reg(str(g.children[-1])), len(g.children) == 2)
        mn: Token = ch[0]
        ops = [self.operand(o) for o in (ch[1].children if len(ch) > 1 else [])]
        line = self.lines[mn.line - 1].strip() if mn.line - 1 < len(self.lines) else str(mn)
        text = line.split(";")[0].strip() if ";" in line else line
        return decode(str(mn), ops, self.pos(mn), text, guard)

    def operand(self, o: Tree):
        if o.data == "reg":
            return Reg(str(o.children[0]))
        if o.data == "imm":
            return Imm(_int(o.children[0], self.file))
        if o.data == "sym":
            return Sym(str(o.children[0]))
        base_tok, *off = o.children[0].children
        base = Reg(str(base_tok)) if str(base_tok).startswith("%") else Sym(str(base_tok))
        offset = 0
        if off:
            offset = int(str(off[1])) * (-1 if off[0] == "-" else 1)
        return Addr(base, offset)

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


__all__ = ["parse"]

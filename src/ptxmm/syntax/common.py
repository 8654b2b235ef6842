"""Checks shared by all front ends: names resolve, registers/labels exist, expectations parse."""

from __future__ import annotations

from lark import Token, Tree

from ..errors import ParseError, SemanticError, SourcePos
from ..program import (
    MEMORY_INSTRS,
    Addr,
    And,
    Branch,
    Cmp,
    Condition,
    Label,
    Location,
    MemRef,
    Not,
    Or,
    Program,
    RegRef,
    Sym,
    Thread,
    TrueC,
    cond_refs,
    operands,
)


def int_literal(text: str, pos: SourcePos | None = None) -> int:
    """A PTX integer constant: 0x.. hexadecimal, 0b.. binary, 0.. octal, else decimal; an
    optional leading minus sign."""
    s = text.strip()
    sign = -1 if s.startswith("-") else 1
    body = s.lstrip("-+")
    try:
        if body[:2].lower() == "0x":
            return sign * int(body[2:], 16)
        if body[:2].lower() == "0b":
            return sign * int(body[2:], 2)
        if len(body) > 1 and body.startswith("0"):
            return sign * int(body[1:], 8)
        return sign * int(body, 10)
    except ValueError:
        raise ParseError(f"malformed integer constant `{text}`", pos,
                         "PTX reads a leading 0 as octal (digits 0-7); write decimal without it") from None


def build_cond(t, ref, num) -> object:
    """Condition expression tree (rules c_or c_and c_not c_true c_cmp, shared by both condition
    grammars) → CondExpr. ``ref`` turns a reference subtree into a Ref, ``num`` a value token
    or subtree into an int."""
    if t.data in ("c_or", "c_and"):
        kids = [c for c in t.children if not isinstance(c, Token)]
        if len(kids) == 1:
            return build_cond(kids[0], ref, num)
        return (Or if t.data == "c_or" else And)(tuple(build_cond(k, ref, num) for k in kids))
    if t.data == "c_not":
        return Not(build_cond(t.children[1], ref, num))
    if t.data == "c_true":
        return TrueC()
    lhs, op, rhs = t.children
    op = "==" if str(op) == "=" else str(op)
    is_ref = isinstance(rhs, Tree) and rhs.data in ("regref", "memref")
    return Cmp(op, ref(lhs), ref(rhs) if is_ref else num(rhs))

_EXPECT = {
    "holds": True, "fails": False, "ok": True, "no": False,
}


def expectation(word: str, cond: Condition | None, pos: SourcePos | None) -> bool:
    """`.expect` words: holds/fails (the condition in herd's sense), or allowed/forbidden (for an
    exists condition: the outcome it describes is allowed / forbidden), or required (forall)."""
    w = word.lower()
    if w in _EXPECT:
        return _EXPECT[w]
    q = cond.quantifier if cond else None
    if w in ("allowed", "forbidden"):
        if q == "exists":
            return w == "allowed"
        if q == "~exists":
            return w == "forbidden"
        raise SemanticError(f"`.expect {w}` needs an exists or ~exists condition", pos,
                            "use `.expect holds` or `.expect fails` with forall")
    if w == "required":
        if q != "forall":
            raise SemanticError("`.expect required` needs a forall condition", pos,
                                "use `.expect holds` or `.expect fails`")
        return True
    raise SemanticError(f"unknown expectation `{word}`", pos,
                        "use holds, fails, allowed, forbidden or required")


def check_program(p: Program) -> None:
    if not p.threads:
        raise SemanticError("the test has no threads", SourcePos(p.file, 1, 1),
                            "add a `.thread T0 { ... }` block")
    names = [t.name for t in p.threads]
    for t in p.threads:
        if names.count(t.name) > 1:
            raise SemanticError(f"thread {t.name} is defined twice", t.pos)
    locs = _check_locations(p)
    for t in p.threads:
        _check_thread(t, locs)
    if p.condition is not None:
        _check_condition(p, p.condition, locs)


def _check_locations(p: Program) -> dict[str, Location]:
    locs = {loc.name: loc for loc in p.locations}
    if len(locs) != len(p.locations):
        dup = next(loc for loc in p.locations if
                   sum(1 for m in p.locations if m.name == loc.name) > 1)
        raise SemanticError(f"location {dup.name} is declared twice", dup.pos)
    for loc in p.locations:
        if loc.alias_of is not None:
            tgt = locs.get(loc.alias_of)
            if tgt is None:
                raise SemanticError(f"{loc.name} aliases unknown location {loc.alias_of}", loc.pos)
            seen = [loc.name]
            while tgt is not None and tgt.alias_of is not None:
                if tgt.name in seen:
                    raise SemanticError(f"alias declarations form a cycle: {' -> '.join(seen)}"
                                        f" -> {tgt.name}", loc.pos, "one location must be declared"
                                        " with a value, not as an alias")
                seen.append(tgt.name)
                tgt = locs.get(tgt.alias_of)
    return locs


def _check_thread(t: Thread, locs: dict[str, Location]) -> None:
    """Branch targets are labels of the thread; location names are declared; no offsets."""
    labels = {i.name for i in t.instrs if isinstance(i, Label)}
    for ins in t.instrs:
        if isinstance(ins, Branch) and ins.target not in labels:
            raise SemanticError(f"unknown label {ins.target}", ins.pos,
                                f"labels of thread {t.name}: {', '.join(sorted(labels)) or 'none'}")
        for o in operands(ins):
            base = o.base if isinstance(o, Addr) else o
            if isinstance(base, Sym) and base.name not in locs and base.name not in labels:
                raise SemanticError(f"unknown location {base.name}", ins.pos,
                                    f"declare it, e.g. `.global .u32 {base.name} = 0;`")
        if isinstance(ins, MEMORY_INSTRS) and ins.addr.offset != 0:
            raise SemanticError("address offsets are not supported", ins.pos,
                                "declare a separate location for each word")


def _check_condition(p: Program, cond: Condition, locs: dict[str, Location]) -> None:
    for r in cond_refs(cond.expr):
        if isinstance(r, MemRef) and r.loc not in locs:
            raise SemanticError(f"condition names unknown location {r.loc}", p.threads[-1].pos,
                                "declare it or refer to a register as THREAD:%reg")
        if isinstance(r, RegRef):
            t = p.thread(r.thread) or (
                p.threads[int(r.thread)] if r.thread.isdigit() and int(r.thread) < len(p.threads)
                else None)
            if t is None:
                raise SemanticError(f"condition names unknown thread {r.thread}", None,
                                    f"threads: {', '.join(t.name for t in p.threads)}")

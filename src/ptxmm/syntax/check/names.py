"""The names of a program: threads and locations unique, alias targets declared and acyclic, labels
unique and branch targets labels, location operands declared and each access as wide as its
location; and the condition's names (locations, threads, registers its thread writes) and
constants (each fits the type it is compared with)."""

from __future__ import annotations

from ...errors import Diagnostic, SemanticError, UnsupportedError
from ...ir.program import (
    MEMORY_INSTRS,
    Addr,
    Branch,
    Cmp,
    Label,
    Location,
    MemRef,
    Program,
    Reg,
    RegRef,
    Sym,
    Thread,
    cond_refs,
    operands,
    type_width,
)
from .common import Sources, did_you_mean, line_of
from .dataflow import Flow, written_regs


def check_threads(p: Program, locs: dict[str, Location]) -> UnsupportedError | None:
    """Check each thread; the first "not supported yet" is returned, not raised, so that an
    error the front end finds (a program that is wrong, not only unmodelled) is the one reported."""
    first = None
    for t in p.threads:
        try:
            _check_thread(t, locs)
        except UnsupportedError as e:
            first = first or e
    return first


def check_locations(p: Program) -> dict[str, Location]:
    locs: dict[str, Location] = {}
    for loc in p.locations:
        if loc.name in locs:
            raise SemanticError(f"location {loc.name} is declared twice", loc.pos,
                                f"first declared at line {line_of(locs[loc.name].pos)}")
        locs[loc.name] = loc
    for loc in p.locations:
        if loc.alias_of is None:
            continue
        tgt = locs.get(loc.alias_of)
        if tgt is None:
            raise SemanticError(f"{loc.name} aliases unknown location {loc.alias_of}", loc.pos,
                                did_you_mean(loc.alias_of, locs) + "declare the data location "
                                "before the alias")
        seen = [loc.name]
        while tgt is not None and tgt.alias_of is not None:
            if tgt.name in seen:
                raise SemanticError(f"alias declarations form a cycle: {' -> '.join(seen)}"
                                    f" -> {tgt.name}", loc.pos, "one location must be declared"
                                    " with a value, not as an alias")
            seen.append(tgt.name)
            tgt = locs.get(tgt.alias_of)
        if tgt is not None and type_width(tgt.type) != type_width(loc.type):
            raise SemanticError(f"{loc.name} (.{loc.type}) aliases {tgt.name} (.{tgt.type}), "
                                "a location of another width", loc.pos,
                                "mixed-size accesses are outside the memory model: declare the "
                                f"alias as .{tgt.type}")
    return locs


def _check_thread(t: Thread, locs: dict[str, Location]) -> None:
    """Labels are unique, branch targets are labels, location names are declared, accesses are
    as wide as their location, no address offsets."""
    labels: dict[str, Label] = {}
    for ins in t.instrs:
        if isinstance(ins, Label):
            if ins.name in labels:
                raise SemanticError(f"label {ins.name} is defined twice in thread {t.name}",
                                    ins.pos, f"first defined at line {line_of(labels[ins.name].pos)};"
                                    " a branch needs one target: rename one of them")
            labels[ins.name] = ins
    for ins in t.instrs:
        if isinstance(ins, Branch) and ins.target not in labels:
            raise SemanticError(f"unknown label {ins.target}", ins.pos,
                                did_you_mean(ins.target, labels) + f"labels of thread {t.name}: "
                                + (", ".join(sorted(labels)) or "none"))
        for o in operands(ins):
            base = o.base if isinstance(o, Addr) else o
            if isinstance(base, Sym) and base.name not in locs and base.name not in labels:
                raise SemanticError(f"unknown location {base.name}", ins.pos,
                                    did_you_mean(base.name, locs) + "declare it, e.g. "
                                    f"`.global .u32 {base.name} = 0;`")
        if isinstance(ins, MEMORY_INSTRS):
            _check_access(ins, locs)


def _check_access(ins, locs: dict[str, Location]) -> None:
    if ins.addr.offset != 0:
        raise UnsupportedError(f"address offset {ins.addr.offset:+d}", ins.pos,
                               "each location is one word: declare a separate location for each word")
    if not isinstance(ins.addr.base, Sym):
        return
    loc = locs[ins.addr.base.name]
    if type_width(loc.type) != type_width(ins.type):
        w = type_width(loc.type)
        raise UnsupportedError(
            f"`{ins.text}` accesses {loc.name} with {type_width(ins.type)} bits, but {loc.name} "
            f"is a .{loc.type} ({w} bits)", ins.pos,
            f"mixed-size accesses are outside the memory model: access {loc.name} as "
            f".{ins.type[0] if ins.type[0] in 'usb' else 'b'}{w}, or declare it "
            f"`.{loc.space} .{ins.type} {loc.name}`")


# ----- the condition ----------------------------------------------------------------------------------


def _thread_of(p: Program, name: str) -> Thread | None:
    t = p.thread(name)
    if t is None and name.isdigit() and int(name) < len(p.threads):
        t = p.threads[int(name)]
    return t


def check_condition_names(p: Program, locs: dict[str, Location], src: Sources) -> None:
    assert p.condition is not None
    for r in cond_refs(p.condition.expr):
        pos = src.refs.get(r)
        if isinstance(r, MemRef) and r.loc not in locs:
            raise SemanticError(f"the condition names unknown location {r.loc}", pos,
                                did_you_mean(r.loc, locs) + "declare it, or name a register as "
                                + ("THREAD:%reg" if src.dialect == "ptx" else "P0:r0"))
        if isinstance(r, RegRef) and _thread_of(p, r.thread) is None:
            names = [t.name for t in p.threads]
            raise SemanticError(f"the condition names unknown thread {r.thread}", pos,
                                did_you_mean(r.thread, names) + f"threads: {', '.join(names)}")


def check_condition_registers(p: Program, src: Sources) -> list[Diagnostic]:
    """Registers named by the condition are written by their thread; constants fit the type of
    what they are compared with. A register written on some paths only is a warning."""
    assert p.condition is not None
    warnings = []
    flows = {t.name: Flow(t, src) for t in p.threads}
    for r in dict.fromkeys(cond_refs(p.condition.expr)):
        if not isinstance(r, RegRef):
            continue
        t = _thread_of(p, r.thread)
        assert t is not None
        written = written_regs(t)
        if r.reg not in written:
            raise SemanticError(
                f"the condition names {r.thread}:{r.reg}, which thread {t.name} never writes",
                src.refs.get(r), did_you_mean(r.reg, written) + "a register has a final value "
                "only once its thread writes it" + (f"; {t.name} writes "
                + ", ".join(sorted(written)) if written else f"; {t.name} writes no register"))
        if not flows[t.name].defined_at_exit(r.reg):
            warnings.append(Diagnostic(
                f"{r.thread}:{r.reg} is not written on every path of thread {t.name}",
                src.refs.get(r), "where it is not written, the condition reads it as 0"))
    _check_condition_constants(p, src)
    return warnings


def _ref_type(p: Program, r) -> str:
    if isinstance(r, MemRef):
        loc = p.location(r.loc)
        return loc.type if loc is not None else "u32"
    t = _thread_of(p, r.thread)
    types = dict(t.reg_types) if t is not None else {}
    if r.reg in types:
        return types[r.reg]
    for ins in reversed(t.instrs if t is not None else ()):
        dst = getattr(ins, "dst", None)
        if isinstance(dst, Reg) and dst.name == r.reg:
            return "pred" if type(ins).__name__ == "Setp" else ins.type
    return "u32" if p.format == "ptx" else "s32"


def _check_condition_constants(p: Program, src: Sources) -> None:
    """A constant compared with a name must fit the name's type, read either signed or unsigned
    (it is compared at that type, so a larger one would silently wrap)."""
    for r, value, pos in src.consts:
        constant_fits(p, r, value, pos)


def constant_fits(p: Program, r, value: int, pos, by: str = "the condition") -> None:
    """``value`` compared with ``r`` (a register or location of ``p``) fits its type, read signed
    or unsigned; else an error (``by``: what compares them — the condition, an outcome)."""
    ty = _ref_type(p, r)
    w = type_width(ty)
    lo, hi = (0, 1) if ty == "pred" else (-(1 << (w - 1)), (1 << w) - 1)
    if not lo <= value <= hi:
        name = r.loc if isinstance(r, MemRef) else f"{r.thread}:{r.reg}"
        raise SemanticError(f"{value} does not fit {name} (.{ty}), which {by} compares it with",
                            pos, f"{name} holds {w} bits: {lo}..{hi}")


def cond_consts(expr) -> list[tuple[object, int]]:
    """The (name, constant) pairs of a condition's comparisons, without recursion."""
    out, stack = [], [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Cmp):
            if isinstance(e.rhs, int):
                out.append((e.lhs, e.rhs))
        elif hasattr(e, "args"):
            stack += list(e.args)
        elif hasattr(e, "arg"):
            stack.append(e.arg)
    return out


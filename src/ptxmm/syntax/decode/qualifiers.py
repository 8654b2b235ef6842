"""The one qualifier cursor and the one set of semantics/scope rules of both instruction dialects:
the ``.ptx`` decoders (one mnemonic token, ``ld.relaxed.gpu.u32``) and Dat3M's ``.litmus`` cells
(``ld . relaxed . gpu``, each qualifier its own token). Where the two dialects word the same
rule differently, each keeps its own message (the tests and docs/errors.md compare them)."""

from __future__ import annotations

from ...errors import ParseError, SourcePos, UnsupportedError
from ..check import did_you_mean
from .registry import QUALIFIERS, REPEATED, all_qualifiers

PTX, LITMUS = "ptx", "litmus"

SEMS = ("weak", "relaxed", "acquire", "release", "acq_rel", "sc")
SCOPES = frozenset(("cta", "cluster", "gpu", "sys"))
SPACES = {"global": "global", "shared": "shared", "shared::cta": "shared",
          "shared::cluster": "shared"}
TYPES = {f"{k}{n}" for k in "usb" for n in (8, 16, 32, 64)} | {"f32", "f64", "pred", "f16"}
CACHE_HINTS = {"ca", "cg", "cs", "lu", "cv", "wb", "wt", "L1::evict_normal", "L1::evict_unchanged",
               "L1::evict_first", "L1::evict_last", "L1::no_allocate", "L2::64B", "L2::128B",
               "L2::256B", "L2::evict_normal", "L2::evict_first", "L2::evict_last", "L2::cache_hint"}
COPS = {"ca", "cg", "cs", "lu", "cv", "wb", "wt"}


class Quals:
    """A cursor over the dot-separated qualifiers of one mnemonic. Each qualifier comes with where
    it stands: a column offset from ``pos`` (``.ptx``: the mnemonic is one token) or its own
    SourcePos (``.litmus``: whitespace and comments may stand around each dot); ``end`` is where
    a missing qualifier is reported (just after the mnemonic), in the same two forms."""

    __slots__ = ("items", "mnemonic", "pos", "end", "dialect", "known")

    def __init__(self, items: list[tuple[str, int | SourcePos]], mnemonic: str,
                 pos: SourcePos | None, end: int | SourcePos, dialect: str = PTX,
                 known: frozenset[str] = frozenset()):
        self.items, self.mnemonic, self.pos, self.end = items, mnemonic, pos, end
        # litmus: the qualifiers a leftover one is "out of place" rather than "unknown"
        self.dialect, self.known = dialect, known

    @property
    def base(self) -> str:
        return self.mnemonic.split(".")[0]

    def at(self, where: int | SourcePos) -> SourcePos | None:
        if isinstance(where, SourcePos):
            return where
        if self.pos is None:
            return None
        return SourcePos(self.pos.file, self.pos.line, self.pos.col + where)

    def qpos(self) -> SourcePos | None:
        """Where the current qualifier stands (just after the mnemonic when none is left)."""
        return self.at(self.items[0][1] if self.items else self.end)

    def peek(self) -> str | None:
        return self.items[0][0] if self.items else None

    def take(self) -> str:
        return self.items.pop(0)[0]

    def take_if(self, allowed) -> str | None:
        if self.items and self.items[0][0] in allowed:
            return self.take()
        return None

    def fail(self, message: str, hint: str | None = None, unsupported: bool = False,
             typo: bool = False):
        """Raise at the current qualifier (or just after the mnemonic). With ``typo`` (the
        generic rejections: a missing type, scope or operation, a qualifier left over), a
        ``.ptx`` qualifier that no instruction knows and that is close to one this instruction
        takes is reported as a misspelling: ``st.relase.gpu`` → unknown qualifier `.relase`, did
        you mean `.release`?"""
        cls = UnsupportedError if unsupported else ParseError
        if typo and self.items and self.dialect == PTX:
            message, hint = _misspelt(self.mnemonic, self.items[0][0], message, hint)
        raise cls(message, self.qpos(), hint)

    def done(self, form: str) -> None:
        """No qualifier may be left over. The wording is each dialect's own: ``.ptx`` names
        vector accesses and misspellings, ``.litmus`` calls a qualifier of its dialect out of
        place and any other unknown (tests compare both)."""
        if not self.items:
            return
        q = self.peek()
        if self.dialect == LITMUS:
            what = "out of place" if q in self.known else "unknown"
            self.fail(f"{what} qualifier .{q} in `{self.mnemonic}`",
                      did_you_mean(q.lower(), self.known) * (what == "unknown")
                      + f"expected form: {form}")
        if q in ("v2", "v4", "v8"):
            self.fail(f"vector access .{q} in `{self.mnemonic}`",
                      "write one scalar access per element", unsupported=True)
        self.fail(f"unexpected qualifier .{q} in `{self.mnemonic}`", f"expected form: {form}",
                  typo=True)


def split_mnemonic(m: str, pos: SourcePos | None) -> tuple[str, Quals]:
    """A ``.ptx`` mnemonic token: its opcode and the cursor over its qualifiers."""
    parts = m.split(".")
    items: list[tuple[str, int | SourcePos]] = []
    off = len(parts[0]) + 1
    for p in parts[1:]:
        items.append((p, off))
        off += len(p) + 1
    return parts[0], Quals(items, m, pos, len(m))


# ----- types and state spaces (.ptx) --------------------------------------------------------------


def take_type(q: Quals, form: str) -> str:
    t = q.take_if(TYPES)
    if t is None:
        nxt = q.peek()
        if nxt in ("v2", "v4", "v8"):
            q.fail(f"vector access .{nxt} in `{q.mnemonic}`",
                   "write one scalar access per element", unsupported=True)
        if nxt in SCOPES or nxt in SPACES or nxt in ("weak", "relaxed", "acquire", "release",
                                                    "acq_rel", "volatile", "mmio", "sc"):
            q.fail(f"qualifier .{nxt} is out of place in `{q.mnemonic}`",
                   f"expected order: {form}")
        q.fail(f"missing or unknown type in `{q.mnemonic}`" + (f" (got .{nxt})" if nxt else ""),
               f"expected form: {form}; types are .u32 .s32 .b32 .u64 .s64 .b64 ...", typo=True)
    return t


def take_space(q: Quals) -> str | None:
    s = q.take_if(SPACES)
    if s is None and q.peek() == "const":
        q.fail(f"`{q.base}` cannot write the constant state space .const",
               "the constant bank is read-only: read it with ld.const, write the data location "
               "it aliases with st.global")
    if s is None and q.peek() in ("local", "param", "tex"):
        q.fail(f"state space .{q.peek()} is outside the memory model", "use .global or .shared",
               unsupported=True)
    return SPACES[s] if s else None


# ----- semantics and scope: ld/st/atom/red and fences, both dialects -------------------------------
# One rule set. What differs by dialect: an ld/st written without semantics is weak in .ptx and an
# error in Dat3M's dialect (its grammar requires one); the messages, which each dialect words its
# own way (tests/syntax/test_misspellings.py, tests/syntax/test_litmus*.py and docs/errors.md compare them).


def mem_sem(q: Quals, allowed, form: str | None, rmw: bool = False,
            volatile: bool = True) -> tuple:
    """Semantics + scope of a memory access: (sem, scope, volatile). A weak access takes no scope,
    a strong ld/st needs one; atom/red (``rmw``) default to relaxed at .gpu. ``volatile``: the
    instruction may be ``.volatile`` or ``.mmio.relaxed.sys``."""
    s = q.peek()
    if volatile and s in ("mmio", "volatile"):
        return _volatile(q, form)
    if s in SEMS:
        return _explicit_sem(q, allowed, rmw)
    if rmw:
        return "relaxed", q.take_if(SCOPES) or "gpu", False
    return _no_sem(q, allowed)


def _volatile(q: Quals, form: str | None) -> tuple:
    """``.mmio.relaxed.sys`` or ``.volatile``: relaxed at system scope, marked volatile."""
    if q.take() == "mmio":
        if q.take_if({"relaxed"}) is None or q.take_if({"sys"}) is None:
            # .litmus: no expected form in the hint (its message has had none)
            q.fail("`.mmio` must be written `.mmio.relaxed.sys`",
                   f"expected form: {form}" if q.dialect == PTX else None)
        return "relaxed", "sys", True
    if q.peek() in SCOPES:
        q.fail("`.volatile` takes no scope (it means relaxed at .sys scope)",
               f"drop the scope, or write {q.base}.relaxed.sys")
    return "relaxed", "sys", True


def _explicit_sem(q: Quals, allowed, rmw: bool) -> tuple:
    s, base = q.peek(), q.base
    if s not in allowed:
        if q.dialect == LITMUS:
            q.fail(f"`{base}` does not take .{s}", f"{base} takes .{', .'.join(allowed)}")
        q.fail(f"`.{s}` is not a valid semantics for `{base}`",
               f"allowed: {', '.join('.' + a for a in sorted(allowed))}")
    q.take()
    if s == "weak":
        if q.peek() in SCOPES:
            _weak_scope(q)
        return "weak", None, False
    sc = q.take_if(SCOPES)
    if sc is None:
        if not rmw:
            if q.dialect == LITMUS:
                q.fail(f"`{base}.{s}` needs a scope", f"add one of .cta .gpu .sys, e.g. {base}.{s}.gpu")
            q.fail(f"`.{s}` needs a scope right after it",
                   f"add one of .cta .cluster .gpu .sys, e.g. {base}.{s}.gpu", typo=True)
        sc = "gpu"
    return s, sc, False


def _weak_scope(q: Quals) -> None:
    sc, base = q.peek(), q.base
    if q.dialect == LITMUS:
        q.fail(f"a weak access takes no scope (.{sc})",
               f"drop the scope ({base}.weak), or write {base}.relaxed.{sc}")
    q.fail("a weak access takes no scope", "drop the scope or use .relaxed.<scope>")


def _no_sem(q: Quals, allowed) -> tuple:
    """An ld/st without semantics: weak in .ptx (a scope alone is an error), an error in Dat3M's
    dialect."""
    s = q.peek()
    if q.dialect == LITMUS:
        what = "a scope" if s in SCOPES else f"`.{s}`" if s else "nothing"
        forms = "|".join(a if a == "weak" else f"{a}.scope" for a in allowed)
        q.fail(f"`{q.base}` needs semantics, got {what}",
               did_you_mean((s or "").lower(), allowed) + f"write {q.base}.{forms}")
    if s in SCOPES:
        sc = q.take()
        q.fail(f"scope .{sc} without semantics", f"write .relaxed.{sc} (or .acquire/.release)")
    return "weak", None, False


def fence_sem(q: Quals) -> str:
    """A fence's semantics (acq_rel when none is written): .ptx takes .sc .acq_rel .acquire
    .release; Dat3M's dialect .sc and .acq_rel, and names any other semantics as wrong."""
    if q.dialect == PTX:
        return q.take_if({"sc", "acq_rel", "acquire", "release"}) or "acq_rel"
    pos = q.qpos()
    sem = q.take_if(SEMS) or "acq_rel"
    if sem not in ("sc", "acq_rel"):
        raise ParseError(f"a fence does not take .{sem}", pos, "fences are fence.sc.<scope> "
                         "or fence.acq_rel.<scope> (or fence.proxy.<kind>)")
    return sem


def fence_scope(q: Quals, sem: str) -> str:
    """A fence's scope, which it needs."""
    scope = q.take_if(SCOPES)
    if scope is None:
        if q.dialect == LITMUS:
            q.fail("a fence needs a scope", f"add one of .cta .gpu .sys, e.g. fence.{sem}.gpu")
        q.fail("fence needs a scope", "add one of .cta .cluster .gpu .sys", typo=True)
    return scope


# ----- qualifier categories (.ptx): each at most once per instruction ------------------------------

_CATEGORY = {
    **{s: "semantics" for s in (*SEMS, "volatile")},
    **{s: "scope" for s in SCOPES},
    **{s: "state space" for s in (*SPACES, "const", "local", "param")},
    **{t: "type" for t in TYPES},
    **{c: "cache operator" for c in COPS},
    **{h: "L1 eviction priority" for h in CACHE_HINTS if h.startswith("L1::")},
    **{h: "L2 eviction priority" for h in CACHE_HINTS if h.startswith("L2::evict")},
    **{h: "L2 prefetch size" for h in ("L2::64B", "L2::128B", "L2::256B")},
    "L2::cache_hint": "cache-policy operand",
}


def check_repeats(base: str, q: Quals) -> None:
    """``st.global.cg.wb.u32``, ``ld.relaxed.gpu.sys...``: a second qualifier of one category."""
    seen: dict[str, str] = {}
    allowed = REPEATED.get(base, set())
    for name, where in q.items:
        cat = _CATEGORY.get(name)
        if cat is None or cat in allowed:
            continue
        if cat in seen:
            raise ParseError(f"a second {cat} `.{name}` in `{q.mnemonic}` (after `.{seen[cat]}`)",
                             q.at(where), f"an instruction takes at most one {cat}: drop one")
        seen[cat] = name


def _misspelt(mnemonic: str, qual: str, message: str, hint: str | None) -> tuple[str, str | None]:
    """(message, hint) of a rejection at ``qual``: the decoder's own, unless ``qual`` is no
    instruction's qualifier and close to one of this instruction's."""
    every = all_qualifiers()
    if qual in every:
        return message, hint
    guess = did_you_mean(qual, QUALIFIERS.get(mnemonic.split(".")[0], every), ".")
    if not guess:
        return message, hint
    if hint and "did you mean" in hint:  # the decoder's own guess
        guess = ""
    return f"unknown qualifier `.{qual}` in `{mnemonic}`", guess + (hint or "")

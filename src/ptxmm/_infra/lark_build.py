"""The front ends' Lark parsers, loaded as pickles of the objects Lark built (see "the parser
object, pickled" below), with the regular expressions of their lexers cached.

Lark (``cache=True``) keeps a grammar's LALR tables in a temporary file, but its contextual lexer
compiles, at the first parse of each process, one regular expression per parser state it meets:
about 30 alternations of the grammar's terminals for a two-thread ``.ptx`` file, 6-7 ms in
Python's pure-Python regex compiler (``re._parser``, ``re._compiler``) at every start of ptxmm.

The compiled form of a pattern is a function of the pattern text, its flags and the Python that
compiled it, and nothing else. A :class:`RegexStore` keeps what the compiler produced (the code
list, flags and groups that ``re._compiler.compile`` hands to ``_sre.compile``) in the user cache
directory, one file per grammar and Python, and a later process passes it straight to
``_sre.compile``, the C half of ``re``, which validates the code. A file written by another Python
(its ``sys.version`` and ``_sre.MAGIC`` are in the file and must match), a damaged file, a pattern
not stored, or a Python whose ``re`` internals differ: the pattern is compiled by ``re.compile``
as before. A stored entry can never be stale: its key is the whole pattern text and its flags."""

from __future__ import annotations

import importlib
import os
import pickle  # (Lark imports it too)
import re
import sys
import types
from pathlib import Path
from typing import Any

from . import larkrt
from .resources import cache_dir, data_dir, digest


def build(grammar: str, **options: Any) -> larkrt.Lark:
    """The parser of ``grammar/<grammar>``, a :class:`larkrt.Lark` (a pickle of it, else built
    from the tables Lark computes), its lexers' regular expressions served by a
    :class:`RegexStore`."""
    text = (data_dir("grammar") / grammar).read_text()
    parser = _unpickled(text, options)
    store = RegexStore(cache_dir("lexer") / f"{Path(grammar).stem}-{sys.implementation.cache_tag}.pickle")
    for lexer in _basic_lexers(parser):
        if getattr(lexer, "re", None) is re:
            lexer.re = store
    return parser


# ----- the parser object, pickled ----------------------------------------------------------------
# Lark serializes a grammar's tables in its own form, which it turns back into objects in Python
# at every start (4-5 ms for ptx.lark); the objects themselves, pickled as they were built
# (before any parse: no lexer has compiled a pattern yet), load in a third of that. Modules and
# the runtime's module-level objects (the parser actions Shift and Reduce, which the parser
# compares by identity) are pickled by name, so the loaded parser refers to the very same ones.
# The key is the grammar's text, the options, the runtime (larkrt.STAMP: the installed Lark) and
# Python's version; the file is named by a digest of it and holds it: another grammar, option,
# Lark or Python reads another file (or one whose key differs), and builds and writes it.


_FORMAT = 3  # how _from_tables makes a parser: a change here gives every grammar another file
# (3: a custom lexer class is pickled by name itself, no longer wrapped by Lark in a local class
# that could not be pickled; its interface is in the key: a ptxmm whose class of the same name
# has another interface reads another file)


def _unpickled(text: str, options: dict) -> larkrt.Lark:
    lexer = options.get("lexer")
    interface = getattr(lexer, "__future_interface__", None) if isinstance(lexer, type) else None
    key = repr((text, sorted(options.items()), interface, larkrt.STAMP, sys.version, _FORMAT))
    path = cache_dir("parsers") / f"{digest(key)}.pickle"
    try:
        with open(path, "rb") as f:
            stored, parser = _Unpickler(f).load()
        if stored == key and isinstance(parser, larkrt.Lark):
            return parser
    except Exception:  # no file yet, a partial one, or another key's: build the parser
        pass
    parser = _from_tables(text, options)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            _Pickler(f).dump((key, parser))
        os.replace(tmp, path)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):  # no cache: no error
        tmp.unlink(missing_ok=True)
    return parser


def _from_tables(text: str, options: dict) -> larkrt.Lark:
    """Lark builds the grammar's tables (the one place ptxmm imports Lark itself); the runtime's
    ``Lark`` loads them. A lexer class (a :class:`larkrt.Lexer`) is the runtime's, so the tables
    are built for Lark's basic lexer — the LALR tables do not depend on the lexer — and the class
    is named in the loaded options."""
    import lark
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    custom = options.get("lexer") if isinstance(options.get("lexer"), type) else None
    real = lark.Lark(text, **({**options, "lexer": "basic"} if custom else options))
    data, memo = real.memo_serialize([TerminalDef, Rule])
    if custom is not None:
        parser = {**data["parser"], "lexer_conf": {**data["parser"]["lexer_conf"], "lexer_type": custom}}
        data = {**data, "parser": parser, "options": {**data["options"], "lexer": custom}}
    return larkrt.Lark._load_from_dict(data, memo)


def _lark_globals() -> dict[int, tuple[str, str, object]]:
    """id → (module, name, object) of the objects the runtime module holds at module level (not
    the classes and functions, which pickle refers to by name anyway)."""
    plain = (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType, str, int, float,
             bool, tuple, frozenset, bytes, type(None))
    out: dict[int, tuple[str, str, object]] = {}
    for attr, obj in vars(larkrt.runtime).items():
        if not isinstance(obj, plain):
            out.setdefault(id(obj), (larkrt.NAME, attr, obj))
    return out


class _Pickler(pickle.Pickler):
    """Pickles a Lark parser with modules and Lark's module-level objects by name."""

    def __init__(self, f):
        super().__init__(f, protocol=pickle.HIGHEST_PROTOCOL)
        self.known = _lark_globals()

    def persistent_id(self, obj: object) -> tuple | None:
        if isinstance(obj, types.ModuleType):
            return ("module", obj.__name__, "")
        hit = self.known.get(id(obj))
        return ("global", hit[0], hit[1]) if hit is not None and hit[2] is obj else None


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid: tuple) -> object:
        kind, module, name = pid
        mod = importlib.import_module(module)
        return mod if kind == "module" else getattr(mod, name)


def _basic_lexers(parser: larkrt.Lark) -> list:
    """The lexers of a contextual (or basic) LALR lexer, where this version of Lark keeps them;
    none where it does not (the lexers then compile with ``re`` itself)."""
    lexer = getattr(getattr(parser, "parser", None), "lexer", None)
    states = getattr(lexer, "lexers", None)
    if isinstance(states, dict):
        return [*states.values(), getattr(lexer, "root_lexer", None)]
    return [lexer]


def module_regexes() -> RegexStore:
    """The store of the regular expressions a module compiles when it is imported (the ``.ptx``
    front end's quick path, syntax/ptx_fast.py: ten patterns, 1-2 ms of every start), one file per
    Python; the same store object for every module of a process."""
    global _MODULE_REGEXES
    if _MODULE_REGEXES is None:
        _MODULE_REGEXES = RegexStore(cache_dir("lexer") / f"modules-{sys.implementation.cache_tag}.pickle")
    return _MODULE_REGEXES


_MODULE_REGEXES: RegexStore | None = None


class RegexStore:
    """Stands in for the ``re`` module in a Lark lexer: ``compile`` (and ``match``, which Lark's
    lexer also calls) with compiled patterns kept in ``path``; every other name is ``re``'s."""

    def __init__(self, path: Path):
        self.path = path
        self.codes: dict[tuple[str, int], tuple] = self._read()  # (pattern, flags) → _sre's args
        self.compiled: dict[tuple[str, int], re.Pattern] = {}  # this process's patterns
        self.added = 0
        self.hits = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)

    @staticmethod
    def _header() -> tuple:
        import _sre

        return (sys.version, getattr(_sre, "MAGIC", None), getattr(_sre, "CODESIZE", None))

    def _read(self) -> dict:
        try:
            header, codes = pickle.loads(self.path.read_bytes())
        except Exception:  # no file yet, or a partial or foreign one: start empty
            return {}
        return codes if header == self._header() and isinstance(codes, dict) else {}

    def compile(self, pattern: str, flags: int = 0) -> re.Pattern:
        key = (pattern, int(flags))
        compiled = self.compiled.get(key)
        if compiled is None:
            compiled = self.compiled[key] = self._compile(key)
        return compiled

    def _compile(self, key: tuple[str, int]) -> re.Pattern:
        stored = self.codes.get(key)
        if stored is not None:
            import _sre

            try:
                compiled = _sre.compile(key[0], *stored)
            except Exception:  # not this Python's code after all: compile it afresh
                del self.codes[key]
            else:
                self.hits += 1
                return compiled
        compiled = re.compile(*key)  # errors (re.error, AssertionError) exactly as re's
        code = _code_of(*key, compiled)
        if code is not None:
            if not self.added:
                import atexit

                atexit.register(self.save)
            self.codes[key] = code
            self.added += 1
        return compiled

    def match(self, pattern: str, string: str, flags: int = 0) -> re.Match | None:
        return self.compile(pattern, flags).match(string)

    def save(self) -> None:
        """Write the store (at exit, when a pattern was added): atomically, so a process that
        reads it meanwhile sees the old file or the new one; a cache that cannot be written is
        no error."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(pickle.dumps((self._header(), self.codes)))
            os.replace(tmp, self.path)
        except OSError:
            pass


def _code_of(pattern: str, flags: int, compiled: re.Pattern) -> tuple | None:
    """The arguments after the pattern that ``re._compiler.compile`` passed to ``_sre.compile``
    for ``compiled`` (flags, code, groups, groupindex, indexgroup); None where they cannot be
    rebuilt here: a Python whose ``re`` works otherwise, or a pattern whose code depends on more
    than its text (``re.LOCALE``). They are kept only if ``_sre.compile`` makes of them a pattern
    equal to ``compiled``: CPython compares two patterns by flags, code and text."""
    if not isinstance(pattern, str) or flags & re.LOCALE:
        return None
    try:
        import _sre
        from re import _compiler, _parser

        p = _parser.parse(pattern, flags)
        code = [int(c) for c in _compiler._code(p, flags)]
        groupindex = dict(p.state.groupdict)
        indexgroup: list[str | None] = [None] * p.state.groups
        for k, i in groupindex.items():
            indexgroup[i] = k
        args = (flags | p.state.flags, code, p.state.groups - 1, groupindex, tuple(indexgroup))
        again = _sre.compile(pattern, *args)
    except Exception:
        return None
    same = (again == compiled and again.groups == compiled.groups
            and again.groupindex == compiled.groupindex)
    return args if same else None

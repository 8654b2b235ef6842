"""Lark's run-time half: what parsing with a grammar's tables needs, without Lark's grammar
compiler — the classes every front end and the cat interpreter use (``Tree``, ``Token``,
``Transformer``, ``Lexer``, the exceptions) and the ``Lark`` class the parsers are.

``import lark`` loads the whole library (the grammar loader, Earley, CYK, the table builder:
about 15 ms of a 100 ms start). Lark ships the run-time half as text for exactly this use: its
*standalone* generator (``python -m lark.tools.standalone``) writes the sections of Lark's own
modules marked ``###{standalone`` into one module. This module writes that module once per
installed Lark (from the installed Lark's files, so the two never disagree) into ptxmm's cache
directory and imports it as ``ptxmm._lark_runtime``; Python caches its bytecode beside it. The
tables of each grammar are still built by Lark itself (``lark_build``), only when its cache has
none, and loaded into this runtime's ``Lark`` class.

Every tree and token ptxmm handles is of this module's classes (never ``lark.Tree``): code
imports them from here. Where the cache directory cannot be written, the module is built in
memory at every start (slower, the same classes)."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import types
from pathlib import Path

from .resources import cache_dir, digest

NAME = "ptxmm._lark_runtime"
_FORMAT = "ptxmm-runtime-1"  # how _source writes the module: a change gives another file


def _lark_dir() -> Path:
    """The installed Lark package's directory, found without importing it."""
    spec = importlib.util.find_spec("lark")
    if spec is None or spec.origin is None:
        raise ImportError("ptxmm needs the lark package (pip install lark)")
    return Path(spec.origin).parent


def _stamp(lark_dir: Path) -> str:
    """Names this Lark install and this Python: the file names of its modules, their sizes and
    times (a reinstall or an upgrade gives another stamp)."""
    parts = [_FORMAT, sys.version, str(lark_dir)]
    for name in ("__init__.py", "lark.py", "lexer.py", "tree.py", "visitors.py", "exceptions.py",
                 "parser_frontends.py", "tools/standalone.py"):
        try:
            st = (lark_dir / name).stat()
        except OSError:
            continue
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def _source(stamp: str) -> str:
    """The runtime module's text, as Lark's standalone generator writes it, less the grammar's
    tables (each parser loads its own), and the stamp of the Lark it was written from."""
    from functools import partial

    from lark.tools import standalone as sa

    parts = [f"# Lark's runtime, written by ptxmm from the installed Lark's own files "
             f"(lark.tools.standalone), Lark {sa.lark.__version__} (MIT licence)."]
    for i, pyfile in enumerate(sa.EXTRACT_STANDALONE_FILES):
        with open(os.path.join(sa._larkdir, pyfile)) as f:
            code = sa.extract_sections(f)["standalone"]
        if i:
            code = sa.strip_docstrings(partial(next, iter(code.splitlines(True))))
        parts.append(code)
    parts.append(f"Shift = 0\nReduce = 1\nSTAMP = {stamp!r}\n")
    return _lazy_logger("\n".join(parts))


_LOGGER = re.compile(r"^import logging\n(?P<mid>(?:.*\n){0,4}?)logger: logging\.Logger = "
                     r"logging\.getLogger\(\"lark\"\)\nlogger\.addHandler\(logging\.StreamHandler\(\)\)\n"
                     r"(?P<end>(?:##\n|\n)*)logger\.setLevel\(logging\.CRITICAL\)\n", re.M)


def _lazy_logger(text: str) -> str:
    """Lark's runtime sets up a ``logging`` logger it uses only on paths ptxmm's parsers never
    take (grammar building, its own cache); ``logging`` costs 1-2 ms at every start. The logger
    becomes a stand-in that sets it up at its first use. Text of another Lark version that does
    not read as expected is left as it is (slower, the same)."""
    lazy = ("class _LazyLogger:\n"
            "    def __getattr__(self, name):\n"
            "        import logging\n"
            "        real = logging.getLogger('lark')\n"
            "        if not real.handlers:\n"
            "            real.addHandler(logging.StreamHandler())\n"
            "            real.setLevel(logging.CRITICAL)\n"
            "        return getattr(real, name)\n"
            "logger = _LazyLogger()\n")
    return _LOGGER.sub(lambda m: m.group("mid") + lazy, text, count=1)


def _write(path: Path, stamp: str) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(_source(stamp))
        os.replace(tmp, path)
        return True
    except OSError:
        return False


def _load() -> types.ModuleType:
    if NAME in sys.modules:
        return sys.modules[NAME]
    stamp = _stamp(_lark_dir())
    path = cache_dir("lark-runtime") / f"lark_runtime_{digest(stamp)}.py"
    for _ in range(2):  # the file as it is; else written afresh
        if path.is_file() or _write(path, stamp):
            _bytecode(path)
            mod = _imported(path)
            if getattr(mod, "STAMP", None) == stamp:
                return mod
            try:  # damaged, or another Lark's under the same name
                path.unlink(missing_ok=True)
            except OSError:  # a cache that cannot be written: the module is built in memory
                break
    mod = types.ModuleType(NAME)
    sys.modules[NAME] = mod
    exec(compile(_source(stamp), f"<{NAME}>", "exec"), mod.__dict__)
    return mod


def _bytecode(path: Path) -> None:
    """The module's bytecode beside it, where Python is told to write none (PYTHONDONTWRITEBYTECODE,
    ``-B``): the file is ptxmm's own, in its cache directory, and compiling its 110 kB of source
    would cost 20 ms or more at every start. Python writes it itself otherwise; an unwritable cache
    or a damaged file only costs time (Python compiles the source)."""
    if not sys.dont_write_bytecode:
        return
    pyc = importlib.util.cache_from_source(str(path))
    if os.path.exists(pyc):
        return
    import py_compile

    try:
        py_compile.compile(str(path), cfile=pyc, doraise=True)
    except (OSError, py_compile.PyCompileError):
        pass


def _imported(path: Path) -> types.ModuleType | None:
    spec = importlib.util.spec_from_file_location(NAME, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception:  # a damaged file
        del sys.modules[NAME]
        return None
    return mod


runtime = _load()
STAMP: str = runtime.STAMP
Lark = runtime.Lark
Tree = runtime.Tree
Token = runtime.Token
Meta = runtime.Meta
Transformer = runtime.Transformer
Discard = runtime.Discard
v_args = runtime.v_args
Lexer = runtime.Lexer
LarkError = runtime.LarkError
UnexpectedInput = runtime.UnexpectedInput
UnexpectedToken = runtime.UnexpectedToken
UnexpectedCharacters = runtime.UnexpectedCharacters
UnexpectedEOF = runtime.UnexpectedEOF
VisitError = runtime.VisitError


def token_texts(tree) -> set[str]:
    """The text of every token in ``tree`` (a token: its own text). The runtime's ``Tree`` has
    no ``scan_values``, which Lark keeps out of its standalone sections."""
    if isinstance(tree, Token):
        return {str(tree)}
    return {str(c) for t in tree.iter_subtrees() for c in t.children if isinstance(c, Token)}

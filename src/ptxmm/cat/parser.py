"""Parse cat model files (grammar/cat.lark) into a Model: an ordered list of typed statements
(:mod:`ptxmm.cat.ast`, built from the parse tree once), with includes resolved relative to the
including file, then the models/ directory, and the program's barrier semantics
(models/program/barriers.cat) given to a model that does not state it."""

from __future__ import annotations

import os
from dataclasses import field, replace
from functools import cache
from pathlib import Path

from .._infra import larkrt
from .._infra.records import record
from .._infra.resources import cache_dir, data_dir, digest
from ..errors import ModelError, SourcePos
from ..syntax.lark_errors import convert
from . import ast
from .ast import Axiom, Flag, Let, LetRec, Stmt
from .build import statement

__all__ = ["Model", "Stmt", "builtin_files", "builtin_models", "find_model", "load_model",
           "model_from_text", "parse_stmts", "require_axioms"]


@record(frozen=False)
class Model:
    name: str
    path: str
    stmts: list[Stmt] = field(default_factory=list)
    # caches of the interpreter: statements the axioms need, expression closures by node id
    needed: list[Stmt] | None = field(default=None, repr=False, compare=False)
    compiled: dict = field(default_factory=dict, repr=False, compare=False)
    # names of the program-semantics axioms the loader added (models/program/barriers.cat)
    implicit: tuple[str, ...] = ()

    @property
    def axioms(self) -> list[Axiom]:
        """The axioms the model's files state (the loader's implicit ones are in stmts too)."""
        return [s for s in self.stmts if isinstance(s, Axiom) and s.name not in self.implicit]


@cache
def _parser() -> larkrt.Lark:
    from .._infra.lark_build import build

    return build("cat.lark", parser="lalr", propagate_positions=True)


@cache
def builtin_files() -> dict[str, Path]:
    """Every .cat file of the models directory: the models and the libraries they include (listed
    once per process: a batch names its model once per test)."""
    return {p.stem: p for p in sorted(data_dir("models").glob("*.cat"))}


def builtin_models() -> dict[str, Path]:
    """The built-in models: the .cat files that state at least one axiom (not the libraries of
    definitions such as ptx-common.cat, which models include)."""
    return {name: p for name, p in builtin_files().items() if load_model(name).axioms}


def find_model(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix == ".cat" or "/" in name_or_path:
        if p.is_file():
            return p
        what = "is a directory" if p.exists() else "does not exist"
        raise ModelError(f"model file {name_or_path} {what}", None,
                         f"check the path, or name a built-in model: {', '.join(builtin_models())}")
    files = builtin_files()
    if name_or_path in files:
        return files[name_or_path]
    import difflib

    close = difflib.get_close_matches(name_or_path, list(builtin_models()), n=1, cutoff=0.6)
    dym = f"did you mean `{close[0]}`? " if close else ""
    raise ModelError(f"unknown model '{name_or_path}'", None,
                     f"{dym}built-in models: {', '.join(builtin_models())}; or give a path to a "
                     ".cat file")


def require_axioms(model: Model) -> None:
    """Refuse a model that states no axiom: it would allow every candidate execution. Such a file
    is a library of definitions for models to include (``--allow-no-axioms`` overrides)."""
    if model.axioms:
        return
    raise ModelError(f"model {model.name} states no axiom (no acyclic, irreflexive or empty "
                     "check): it would allow every execution", SourcePos(model.path, 1, 1),
                     f"it is a library of definitions; use a model that includes it "
                     f"({', '.join(builtin_models())}), or pass --allow-no-axioms")


def load_model(name_or_path: str) -> Model:
    """A model by built-in name or .cat path; one Model object per file and process (a name and
    the path it resolves to give the same object)."""
    if "/" not in name_or_path and Path(name_or_path).suffix != ".cat" and name_or_path in builtin_files():
        return _load_builtin(name_or_path)  # a campaign names its model once per test
    return _load(find_model(name_or_path).resolve())


@cache
def _load_builtin(name: str) -> Model:
    """A built-in model by name: its path resolved once per process (the built-in files are listed
    once per process, so the name always names the same file)."""
    return _load(find_model(name).resolve())


@cache
def _load(path: Path) -> Model:
    model = _from_cache(path)
    if model is None:
        model = _with_program_semantics(Model(path.stem, str(path)), path)
        _to_cache(path, model)
    return model


def _program_file() -> Path:
    """The axioms a PTX program's barriers impose whatever the model (Dat3M's program encoder gives
    every model them): stated by ptxmm's PTX models, added by the loader to any other."""
    return data_dir("models") / "program" / "barriers.cat"


@cache
def _program_semantics() -> tuple[Axiom, ...]:
    path = _program_file()
    return tuple(replace(st, pos=None) for st in parse_stmts(path.read_text(), str(path))
                 if isinstance(st, Axiom))


def _with_program_semantics(model: Model, path: Path) -> Model:
    """``model`` read from ``path``, with the program-semantics axioms it does not state (parsed
    here, then cached with the model's own statements: a cached model needs no cat parser)."""
    _load_into(model, path, set())
    return _add_program_semantics(model)


def _add_program_semantics(model: Model) -> Model:
    stated = {s.name for s in model.axioms}
    extra = []
    for st in _program_semantics():
        name = st.name
        if str(name) not in stated:
            extra.append(st)
    model.stmts[:0] = extra
    model.implicit = tuple(s.name for s in extra)
    return model


# Parsed models are cached on disk (a pickle of the statements with their key), keyed by the text
# of every file the model read and of the grammar: start-up need not run the cat parser for
# built-in models.

def _cache_dir() -> Path:
    return cache_dir("models")


@cache
def _parser_key() -> str:
    """What a parse depends on besides the text: the grammar, the syntax classes and the code that
    builds them from the tree, and the Lark runtime."""
    from . import build

    return "\0".join([(data_dir("grammar") / "cat.lark").read_text(), Path(ast.__file__).read_text(),
                      Path(build.__file__).read_text(), repr(larkrt.STAMP)])


def _key(path: Path, files: list[str]) -> str:
    """The parser's key (:func:`_parser_key`), the text of every file the model read and of the
    loader's implicit axioms: a cached model is used only if all are as they were."""
    parts = [_parser_key(), _program_file().read_text()]
    for f in [str(path.resolve()), *files]:
        parts += [f, Path(f).read_text()]
    return "\0".join(parts)


def _from_cache(path: Path) -> Model | None:
    import pickle

    index = _cache_dir() / (path.resolve().as_posix().replace("/", "_") + ".idx")
    try:
        files = index.read_text().split("\n") if index.is_file() else None
        if files is None:
            return None
        key = _key(path, [f for f in files if f])
        blob = (_cache_dir() / f"{digest(key)}.pickle").read_bytes()
        stored, name, mpath, stmts, implicit = pickle.loads(blob)
        return Model(name, mpath, stmts, implicit=implicit) if stored == key else None
    except Exception:  # a stale, partial or foreign cache entry: parse afresh
        return None


def _to_cache(path: Path, model: Model) -> None:
    import pickle

    files = sorted({st.pos.file for st in model.stmts if st.pos is not None} - {str(path.resolve())})
    try:
        d = _cache_dir()
        d.mkdir(parents=True, exist_ok=True)
        key = _key(path, files)
        blob = pickle.dumps((key, model.name, model.path, model.stmts, model.implicit))
        (d / f"{digest(key)}.pickle").write_bytes(blob)
        (d / (path.resolve().as_posix().replace("/", "_") + ".idx")).write_text("\n".join(files))
    except OSError:  # an unwritable cache only costs time
        pass


def _load_into(model: Model, path: Path, seen: set[Path]) -> None:
    path = path.resolve()
    if path in seen:
        return
    seen.add(path)
    try:
        text = path.read_text().removeprefix("\ufeff")  # a UTF-8 byte order mark
    except OSError as e:
        raise ModelError(f"cannot read model file: {e.strerror}", SourcePos(str(path), 1, 1)) from None
    for st in parse_stmts(text, str(path)):
        if isinstance(st, ast.Include):
            cand = [path.parent / st.file, data_dir("models") / st.file]
            target = next((c for c in cand if c.is_file()), None)
            if target is None:
                raise ModelError(f"included file {st.file} not found", st.pos)
            _load_into(model, target, seen)
        else:
            _add(model, st)


def model_from_text(text: str, file: str = "model.cat") -> Model:
    """A model written as text, read from no file (the playground's model editor): an ``include``
    names a built-in model file only (``include "ptx-common.cat"``: :func:`builtin_files`), never
    a path; the program's barrier semantics are added as to any model. Its errors are located in
    ``file``."""
    model = Model(Path(file).stem or "model", file)
    seen: set[Path] = set()
    files = builtin_files()
    for st in parse_stmts(text.removeprefix("\ufeff"), file):
        if isinstance(st, ast.Include):
            name = st.file[:-4] if st.file.endswith(".cat") else None
            if name not in files:
                raise ModelError(f"`include \"{st.file}\"`: a model written here includes only a "
                                 "built-in model file, by its name", st.pos,
                                 "one of " + ", ".join(f"{n}.cat" for n in files))
            _load_into(model, files[name], seen)
        else:
            _add(model, st)
    return _add_program_semantics(model)


def _add(model: Model, st) -> None:
    if isinstance(st, Axiom) and not st.name:
        model.stmts.append(replace(st, name=f"{st.check}-{len(model.axioms)}"))
    elif isinstance(st, (Let, LetRec, Axiom, Flag)):
        model.stmts.append(st)


def parse_stmts(text: str, file: str) -> list:
    """The statements of one cat file, in order (includes unresolved, an unnamed axiom's name
    empty); a syntax error is a located ModelError. Text ptxmm itself holds (the engine's
    reference axioms, named ``<...>``) is parsed once per install (:class:`_Snippets`)."""
    builtin = file.startswith("<") and file.endswith(">")
    if builtin and (hit := _snippets().get(file, text)) is not None:
        return hit
    try:
        tree = _parser().parse(text)
    except larkrt.LarkError as e:
        err = convert(e, file, text)
        raise ModelError(err.message, err.pos, err.hint) from None
    stmts = [statement(st, file) for st in tree.children
             if isinstance(st, larkrt.Tree) and st.data != "title"]
    if builtin:
        _snippets().put(file, text, stmts)
    return stmts


class _Snippets:
    """The parsed statements of the cat text ptxmm holds in its code (the engine's reference
    axioms: engines/prune.py, semantics/rmw_chains.py), in one file of the cache directory, so
    that a check needs no cat parser (building it costs several ms of a start) when its model is
    cached too. The file holds the parser's key (:func:`_parser_key`) and is named by a digest of
    it: another grammar, syntax class or Lark reads another file. An entry's key is the whole text
    and its file name; a damaged or foreign file is a miss; an unwritable cache only costs time.
    At most ``LIMIT`` entries (the texts are a handful of constants; past the limit, a fresh
    file)."""

    LIMIT = 64

    def __init__(self) -> None:
        self.key = _parser_key()
        self.path = _cache_dir() / f"snippets-{digest(self.key)}.pickle"
        self.table: dict[tuple[str, str], tuple] = {}
        try:
            import pickle

            key, table = pickle.loads(self.path.read_bytes())
            if key == self.key and isinstance(table, dict):
                self.table = table
        except Exception:  # absent, damaged or foreign: parse afresh
            pass

    def get(self, file: str, text: str) -> list | None:
        hit = self.table.get((file, text))
        return None if hit is None else list(hit)

    def put(self, file: str, text: str, stmts: list) -> None:
        import pickle

        if len(self.table) >= self.LIMIT:
            self.table = {}
        self.table[(file, text)] = tuple(stmts)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(pickle.dumps((self.key, self.table)))
            os.replace(tmp, self.path)
        except OSError:
            pass


@cache
def _snippets() -> _Snippets:
    return _Snippets()

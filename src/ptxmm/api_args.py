"""The Python API's arguments, checked as the command line checks its options.

``check()`` and ``explain()`` call :func:`check_args` / :func:`explain_args` first: a wrong type
or a value out of range is an :class:`~ptxmm.errors.ArgumentError` (a ``ValueError``; for a wrong
type an :class:`~ptxmm.errors.ArgumentTypeError`, also a ``TypeError``) whose words are the CLI's
(``-1 is not in the range 0<=x<=64.``), never an AttributeError from deep inside. Where a user
would expect it, a path (``str`` or ``os.PathLike``) stands for the program it holds, and a
model may be a name, a .cat path (``str`` or ``Path``) or a loaded Model."""

from __future__ import annotations

import math
import operator
import os
from pathlib import Path
from typing import Any

from .cat.parser import Model
from .errors import ArgumentError, ArgumentTypeError
from .ir.program import Program
from .loading import load

# the command line's ranges and choices (cli.py states the same in its click options)
UNROLL_MAX = 64
ENGINES = ("auto", "z3", "brute")
OBSERVE = ("all", "condition")
# what a check may be asked (``--properties``, ``check(..., properties=...)``): the condition's
# verdict (and outcomes), the model's flags (data races), a kernel's sites (assertions,
# out-of-bounds accesses) and liveness (hangs)
PROPERTIES = ("condition", "races", "sites", "liveness")


def check_args(prog: Any = None, model: Any = "ptx", engine: Any = "auto", unroll: Any = 2,
               observe: Any = "all", flags: Any = True, verdict_only: Any = False,
               max_outcomes: Any = None, progress: Any = None, timeout: Any = None,
               allow_no_axioms: Any = False, graph: Any = None, liveness: Any = None,
               progress_model: Any = "fair", max_memory: Any = None, properties: Any = None,
               **_rest: Any) -> tuple[Program, str | Model]:
    """``check()``'s arguments checked (the fields of :func:`settings_model`, the typed record,
    in the CLI's words); the program (loaded when given as a path) and the model (a name, path
    text or Model) returned. Other keywords are left to ``check()``."""
    if liveness is not None:
        boolean("liveness", liveness)  # "no" is not False: a string would turn liveness on
    progress_arg(progress_model)
    properties_arg(properties)
    if graph is not None:
        from .semantics.events import EventGraph

        if not isinstance(graph, EventGraph):
            raise _type("graph", graph, "an EventGraph", "leave it out: check() builds the graph")
    choice("engine", engine, ENGINES)
    choice("observe", observe, OBSERVE)
    int_range("unroll", unroll, 0, UNROLL_MAX)
    if max_outcomes is not None:
        int_range("max_outcomes", max_outcomes, 1, None)
    if timeout is not None:
        seconds("timeout", timeout)
    if max_memory is not None:
        int_range("max_memory", max_memory, 1, None)
    if progress is not None and not callable(progress):
        raise _type("progress", progress, "a function", "progress(n) is called with the number "
                    "of outcomes found so far")
    for name, v in (("flags", flags), ("verdict_only", verdict_only),
                    ("allow_no_axioms", allow_no_axioms)):
        boolean(name, v)
    return program(prog), model_arg(model)


def properties_arg(v: Any) -> frozenset[str] | None:
    """The properties a check is asked: None (the defaults), or names of :data:`PROPERTIES` as
    an iterable or as comma-separated text (``"condition,races"``; as ``--properties`` takes)."""
    if v is None:
        return None
    names = v.split(",") if isinstance(v, str) else v
    try:
        names = [n.strip() if isinstance(n, str) else n for n in names]
    except TypeError:
        raise _type("properties", v, "a list of property names",
                    "e.g. properties=(\"condition\", \"races\") or \"condition,races\"") from None
    for n in names:
        if not isinstance(n, str) or n not in PROPERTIES:
            raise ArgumentError(f"invalid value for properties: {_shown(n)} is not one of "
                                f"{', '.join(map(repr, PROPERTIES))}.", None,
                                "as --properties takes: a comma-separated list, e.g. condition,races")
    if not names:
        raise ArgumentError("invalid value for properties: no property named", None,
                            "name at least one of " + ", ".join(PROPERTIES))
    return frozenset(names)


def asked_properties(prog: Program, properties: Any, flags: bool, liveness: bool | None) -> frozenset[str]:
    """What a check asks. The defaults (``properties`` None): the condition, races and sites
    (``flags``), liveness for a kernel launch (``liveness`` None) or when ``liveness``.
    ``properties`` and an explicit ``flags=False`` or ``liveness`` that say otherwise are
    refused, never one silently overriding the other."""
    chosen = properties_arg(properties)
    if chosen is None:
        live = prog.layout is not None if liveness is None else bool(liveness)
        return frozenset({"condition"} | ({"races", "sites"} if flags else set())
                         | ({"liveness"} if live else set()))
    if liveness is not None and bool(liveness) != ("liveness" in chosen):
        raise ArgumentError(f"liveness={liveness!r} and properties={sorted(chosen)!r} disagree", None,
                            "leave liveness out: properties says whether liveness is asked")
    if not flags and chosen & {"races", "sites"}:
        raise ArgumentError("flags=False turns races and sites off, but properties asks "
                            + " and ".join(sorted(chosen & {"races", "sites"})), None,
                            "leave flags out: properties says which findings are asked")
    return chosen


def progress_needs_liveness(progress_model: str, liveness: bool) -> None:
    """A progress model (``str(Progress.parse(...))``, queries/hangs) other than the default
    (fair) when liveness is off (False, or None on a litmus test): refused as the CLI refuses
    --progress without --liveness, never ignored."""
    if not liveness and progress_model != "fair":
        raise ArgumentError(f"progress_model={progress_model!r:.60} does not apply without "
                            "liveness (the progress model is the one liveness assumes; as --progress "
                            "without --liveness)", None,
                            "check(..., liveness=True, progress_model=...), or leave progress_model out")


PROGRESS = "fair|obe|lobe|hsa|unfair"
PROGRESS_PATTERN = (rf"^(?:{PROGRESS}|gpu=(?:{PROGRESS})(?:,cta=(?:{PROGRESS}))?"
                    rf"|cta=(?:{PROGRESS})(?:,gpu=(?:{PROGRESS}))?)$")  # each level named once


def settings_model():
    """``check()``'s settings as a typed record (pydantic v2, imported here only: it costs about
    as much as importing ptxmm): the JSON Schema of the settings (docs/json-schema.md,
    "Settings"), and a second statement of the rules :func:`check_args` applies —
    tests/cli/test_settings_record.py holds the two to the same answers. ``prog``, ``progress``
    (a function) and ``graph`` (an EventGraph) are objects, not settings, and are not in it."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    class CheckSettings(BaseModel):
        """The settings of one check (``ptxmm.check(prog, **settings)``)."""

        model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

        model: str = Field("ptx", min_length=1, description="a model name (`ptxmm models`) or a .cat path")
        engine: Literal[ENGINES] = Field("auto", description="the engine; auto picks one")  # type: ignore[valid-type]
        unroll: int = Field(2, ge=0, le=UNROLL_MAX, description="loop unrolling bound")
        observe: Literal[OBSERVE] = Field("all", description="what an outcome records")  # type: ignore[valid-type]
        flags: bool = Field(True, description="look for the model's flags (data races) as findings")
        verdict_only: bool = Field(False, description="decide the condition with one query")
        max_outcomes: int | None = Field(None, ge=1, description="stop enumerating after this many")
        timeout: float | None = Field(None, gt=0, allow_inf_nan=False, description="seconds for the check")
        max_memory: int | None = Field(None, ge=1, description="bytes of resident memory the check may reach")
        allow_no_axioms: bool = Field(False, description="check under a model that states no axiom")
        liveness: bool | None = Field(None, description="also look for hangs (None: for kernels)")
        progress_model: str = Field("fair", pattern=PROGRESS_PATTERN,
                                    description="fair, obe, lobe, hsa, unfair, or per level gpu=obe,cta=fair")
        properties: list[Literal[PROPERTIES]] | None = Field(  # type: ignore[valid-type]
            None, min_length=1, description="what the check asks (None: the defaults)")

    return CheckSettings


def settings_schema() -> dict:
    """The JSON Schema of :func:`settings_model` (docs/json-schema.md prints it)."""
    return settings_model().model_json_schema()


def progress_arg(v: Any) -> None:
    """A progress model's type (text: ``fair``, ``gpu=obe,cta=fair``; check() parses it whether
    liveness is on or not, queries/hangs.Progress.parse)."""
    if not isinstance(v, str) and type(v).__name__ != "Progress":
        raise _type("progress_model", v, "text", "fair, obe, lobe, hsa, unfair, or per level "
                    "gpu=obe,cta=fair")


def settings_error(values: dict[str, str]) -> str | None:
    """Why settings given as text (the pytest plugin's options and ini keys: model, timeout,
    unroll, engine, observe) are wrong, in the CLI's words; None when they are right."""
    conv = {"timeout": float, "unroll": int}
    try:
        typed = {}
        for k, v in values.items():
            try:
                typed[k] = conv[k](v) if k in conv else v
            except ValueError:
                kind = "a number of seconds" if k == "timeout" else "an int"
                return f"--ptxmm-{k} {v!r} is not {kind}"
        choice("engine", typed.get("engine", "auto"), ENGINES)
        choice("observe", typed.get("observe", "all"), OBSERVE)
        int_range("unroll", typed.get("unroll", 2), 0, UNROLL_MAX)
        seconds("timeout", typed.get("timeout", 60.0))
        model_arg(typed.get("model", "ptx"))
    except ArgumentError as e:
        return e.message.replace("invalid value for ", "invalid value for --ptxmm-")
    return None


def explain_args(prog: Any = None, model: Any = "ptx", outcome: Any = None, unroll: Any = 2,
                 fix: Any = False, fix_bound: Any = 400, fix_budget_s: Any = None,
                 **_rest: Any) -> tuple[Program, str | Model]:
    """``explain()``'s arguments checked, as :func:`check_args` does."""
    if fix_budget_s is not None:
        seconds("fix_budget_s", fix_budget_s)
    if outcome is not None and not isinstance(outcome, str):
        raise _type("outcome", outcome, "text", 'an outcome as text, e.g. "T1:%r0=1 T1:%r1=0"')
    int_range("unroll", unroll, 0, UNROLL_MAX)
    boolean("fix", fix)
    int_range("fix_bound", fix_bound, 1, None)
    return program(prog), model_arg(model)


def program(x: Any) -> Program:
    """A Program as it is; a path (``str`` or ``os.PathLike``) read and parsed, as ``ptxmm.load``
    does."""
    if isinstance(x, Program):
        return x
    if isinstance(x, str) and ("\n" in x or "{" in x and not os.path.exists(x)):
        raise ArgumentError("a Program or the path of a .ptx or .litmus file is expected; this "
                            "string looks like program text", None,
                            "parse text first: ptxmm.check(ptxmm.parse(text))")
    if isinstance(x, (str, os.PathLike)):
        return load(os.fspath(x))
    raise _type("prog", x, "a Program or a file path",
                'ptxmm.check("file.ptx"), ptxmm.check(ptxmm.load(path)) or ptxmm.check(ptxmm.parse(text))')


def model_arg(m: Any) -> str | Model:
    """A model name or .cat path as text, or a loaded Model."""
    if isinstance(m, Model):
        return m
    if isinstance(m, os.PathLike):
        return model_arg(os.fspath(m)) if isinstance(os.fspath(m), str) else _bad_model(m)
    if isinstance(m, str) and m and "\x00" not in m:
        return _usable_path(m) if m.endswith(".cat") or "/" in m else m
    return _bad_model(m)


def _usable_path(m: str) -> str:
    """A model path the file system can look up (a name too long for it is refused here, as a
    missing file is by the model loader)."""
    try:
        Path(m).is_file()
    except OSError as e:
        raise ArgumentError(f"invalid value for model: {_shown(m)} cannot be a path ({e.strerror})",
                            None, "name a .cat file, or a built-in model (`ptxmm models`)") from None
    return m


def _bad_model(m: Any) -> str:
    if isinstance(m, str):
        raise ArgumentError(f"invalid value for model: {_shown(m)} names no model", None,
                            "a model name (ptx, sc, ... : `ptxmm models`) or a .cat path")
    raise _type("model", m, "a model name, a .cat path or a Model",
                "`ptxmm models` lists the names (ptx, sc, ...); a path ends in .cat")


def choice(name: str, v: Any, options: tuple[str, ...]) -> None:
    if not isinstance(v, str):
        raise _type(name, v, "text", "one of " + ", ".join(map(repr, options)))
    if v not in options:
        raise ArgumentError(f"invalid value for {name}: {v!r} is not one of "
                            f"{', '.join(map(repr, options))}.", None,
                            f"as --{name.replace('_', '-')} takes")


def int_range(name: str, v: Any, lo: int, hi: int | None) -> None:
    try:
        n = operator.index(v)  # an int, or what stands for one (numpy's integers)
    except TypeError:
        n = None
    if n is None or isinstance(v, bool):
        raise _type(name, v, "an int", f"as --{name.replace('_', '-')} takes")
    if n < lo or (hi is not None and n > hi):
        rng = f"{lo}<=x<={hi}" if hi is not None else f"x>={lo}"
        raise ArgumentError(f"invalid value for {name}: {n} is not in the range {rng}.", None,
                            f"as --{name.replace('_', '-')} takes")


def seconds(name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _type(name, v, "a number", "seconds, as --timeout takes (None: no limit)")
    try:
        f = float(v)
    except OverflowError:  # an int past any float
        f = math.inf
    if math.isnan(f) or f <= 0:
        raise ArgumentError(f"invalid value for {name}: {f} is not in the range x>0.", None,
                            f"as --{name} takes (None: no limit)")
    if math.isinf(f):
        raise ArgumentError(f"invalid value for {name}: {_shown(v)} is not a finite number of seconds",
                            None, "None: no limit")


def boolean(name: str, v: Any) -> None:
    if not isinstance(v, bool):
        raise _type(name, v, "a bool", "True or False")


def _type(name: str, v: Any, expected: str, hint: str) -> ArgumentTypeError:
    return ArgumentTypeError(f"invalid value for {name}: {_shown(v)} ({type(v).__name__}) is not "
                             f"{expected}", None, hint)


def _shown(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."

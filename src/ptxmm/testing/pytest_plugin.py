"""pytest plugin (entry point ``ptxmm`` in the ``pytest11`` group): ``.ptx``, ``.litmus`` and
``.cu`` files that carry an expectation become test items, each checked by ptxmm.

Which files: those under a path named on pytest's command line (``pytest examples/``), or
everywhere pytest looks with ``--ptxmm``. A project whose own ``pytest`` run collects from its
``testpaths`` (as ptxmm's does) keeps its test suite as it was; ``-p no:ptxmm`` turns the plugin
off. A file is collected only when it states what it expects:

* ``.expect allowed|forbidden|required|holds|fails`` (the .ptx front end's line), or a comment
  ``// ptxmm: expect forbidden`` (``(* ptxmm: expect ... *)`` in a Dat3M litmus file) — the
  verdict of the test's condition;
* ``// ptxmm: expect ok`` or ``// ptxmm: expect race, assert-fails, ...`` — the findings (finding
  kinds, docs/json-schema.md) a check must report, no more, no less (``ok``: none; with a
  condition, ``ok`` means ``holds``, as ``.expect ok`` does);
* ``.expect-liveness terminates|hangs`` (a ``.ptx`` test, docs/liveness.md): the file is checked
  with liveness (progress fair), and the liveness verdict must be the line's.

An item passes when every expectation agrees; a verdict left unknown (timeout, no execution
within the unroll bound, a liveness verdict not decided) fails, never passes. A failure prints
what differs and ptxmm's report of the file, as ``ptxmm check`` prints it.

A kernel — a ``.cu`` file, or a PTX module (nvcc's output) with its own ``// ptxmm: expect`` line —
is a kernel test, judged by ``ptxmm test``'s rule (:func:`ptxmm.testing.runner.kernel_verdict`): the kinds
of its findings equal its ``expect`` list and its condition (``// ptxmm: forall ...``) holds. A
``.cu`` file is compiled with nvcc; without nvcc its committed ``.ptx`` twin is checked instead,
and only a ``.cu`` with neither is skipped, saying so.

Options (and ini keys): ``--ptxmm-model`` (``ptxmm_model``; default ptx), ``--ptxmm-timeout``
seconds per file (``ptxmm_timeout``; default 60), ``--ptxmm-unroll`` (``ptxmm_unroll``; default 2),
``--ptxmm-engine``, ``--ptxmm-observe`` (``condition``, the default: one solver query for the
condition's verdict, as ``ptxmm test`` asks; ``all``: every outcome enumerated, which a failure's
report then shows). A wrong setting — a misspelt model among them — is one usage error at
start-up, not a failure of every item.

Each item is named after its test (``examples/mp.ptx::MP+relaxed+acquire``; the kernel's name for
a ``.cu``; ``[MODEL]`` added under a model other than ptx), so node ids and JUnit XML test cases
say which test failed; a failure's first line says what differs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from ..syntax.expect import FINDING_WORDS, expectations

SUFFIXES = (".ptx", ".litmus", ".cu")
DEFAULTS = {"model": "ptx", "timeout": "60", "unroll": "2", "engine": "auto", "observe": "condition"}


ENTRY_POINT = "ptxmm"  # the pytest11 entry point's name (pyproject.toml)


def pytest_plugin_registered(plugin, manager) -> None:
    """Registered once under either name: ``-p ptxmm.testing.pytest_plugin`` registers this
    module by its module name, then the entry point would register it again as ``ptxmm``
    (pytest: "Plugin already registered under a different name"); the other name is blocked, as
    ``-p no:NAME`` blocks it. ``-p ptxmm`` and ``-p no:ptxmm`` are the entry point's."""
    if plugin is not sys.modules[__name__]:
        return
    mine = manager.get_name(plugin)
    for other in (ENTRY_POINT, __name__):
        if other != mine and manager.get_plugin(other) is None and not manager.is_blocked(other):
            manager.set_blocked(other)


def pytest_addoption(parser) -> None:
    group = parser.getgroup("ptxmm", "ptxmm: litmus tests and kernels with an expectation")
    group.addoption("--ptxmm", action="store_true", default=False,
                    help="collect .ptx/.litmus/.cu files with an expectation wherever pytest looks "
                    "(default: only under paths named on the command line)")
    helps = {"model": "model name or .cat file", "timeout": "seconds per file (past it: unknown, a failure)",
             "unroll": "bound on loop iterations", "engine": "auto, z3 or brute",
             "observe": "all (every outcome) or condition (one solver query)"}
    for key, default in DEFAULTS.items():
        group.addoption(f"--ptxmm-{key}", dest=f"ptxmm_{key}", default=None,
                        help=f"{helps[key]} (default: {default}; ini: ptxmm_{key})")
        parser.addini(f"ptxmm_{key}", helps[key], default=default)


def _setting(config, key: str) -> str:
    v = config.getoption(f"ptxmm_{key}")
    return str(v if v is not None else config.getini(f"ptxmm_{key}") or DEFAULTS[key])


def pytest_configure(config) -> None:
    """The ptxmm settings checked once, before any item runs: a wrong one (``--ptxmm-timeout
    abc``) is one usage error naming it, not a ValueError in every item."""
    from ..api_args import settings_error

    try:
        values = {k: _setting(config, k) for k in DEFAULTS}
    except ValueError:  # not a ptxmm run (no such option registered)
        return
    why = settings_error(values)
    if why is not None:
        raise pytest.UsageError(f"ptxmm: {why}")
    from ..cat.parser import load_model
    from ..errors import PtxmmError

    try:  # the model once, here: a misspelt name is one usage error, not a failure per item
        load_model(values["model"])
    except PtxmmError as e:
        raise pytest.UsageError(f"ptxmm: --ptxmm-model: {e}") from None


def _named_roots(config) -> list[Path]:
    """The paths the user named on the command line (not testpaths, not the current directory)."""
    if config.args_source != config.ArgsSource.ARGS:
        return []
    base = Path(config.invocation_params.dir)
    return [(base / a.split("::", 1)[0]).resolve() for a in config.args]


def _wanted(config, path: Path) -> bool:
    if config.getoption("ptxmm"):
        return True
    p = path.resolve()
    return any(p == r or r in p.parents for r in _named_roots(config))


def pytest_collect_file(file_path: Path, parent):
    if file_path.suffix not in SUFFIXES or not _wanted(parent.config, file_path):
        return None
    try:
        text = file_path.read_text(errors="replace")
    except OSError:
        return None
    words, line = expectations(text)
    if not words and not (line and file_path.suffix != ".cu"):
        return None
    return PtxmmFile.from_parent(parent, path=file_path)


_TEST_NAME = {".ptx": re.compile(r"^\s*\.test\s+([^\s\"]+)", re.M),
              ".litmus": re.compile(r"\A\s*\S+\s+([^\s\"]+)"),
              ".cu": re.compile(r"ptxmm:\s*launch\s+(?:(?:cooperative|nonportable)\s+)*"
                                r"([A-Za-z_][\w:]*)\s*<<<")}


def item_name(path: Path, text: str, model: str) -> str:
    """The item's name: the test's own (``.test NAME``, a litmus file's header, a kernel's launch),
    else the file's stem; ``[MODEL]`` under a model other than ptx."""
    m = _TEST_NAME.get(path.suffix, _TEST_NAME[".ptx"]).search(text)
    name = m.group(1) if m else path.stem
    return name if model == DEFAULTS["model"] else f"{name}[{model}]"


class PtxmmFile(pytest.File):
    def collect(self):
        model = _setting(self.config, "model")
        name = item_name(self.path, self.path.read_text(errors="replace"), model)
        item = PtxmmItem.from_parent(self, name=name)
        if self.path.suffix == ".cu" and not self.path.with_suffix(".ptx").is_file():
            from ..kernel.nvcc import find_nvcc

            if find_nvcc() is None:
                item.add_marker(pytest.mark.skip(reason=f"{self.path.name} needs nvcc, which is not "
                                                 "found, and has no .ptx twin"))
        yield item


def source_of(path: Path) -> Path:
    """The file a test checks: a ``.cu`` kernel's ``.ptx`` twin when nvcc is not found (as
    ``ptxmm test`` does), else the file itself."""
    if path.suffix == ".cu" and path.with_suffix(".ptx").is_file():
        from ..kernel.nvcc import find_nvcc

        if find_nvcc() is None:
            return path.with_suffix(".ptx")
    return path


class Mismatch(Exception):
    """An expectation the check did not meet: what differs, and ptxmm's report."""

    def __init__(self, what: list[str], report: str):
        super().__init__("; ".join(what))
        self.what, self.report = what, report


class PtxmmItem(pytest.Item):
    def runtest(self) -> None:
        from ..loading import load

        prog = load(source_of(self.path))
        if prog.kernel is not None:
            return self._kernel(prog)
        # the expectation is the loader's (syntax/expect.py: the .expect line and the comments'
        # verdict words, a contradiction refused), as for `ptxmm check`, `ptxmm test` and the
        # playground; the finding words are the plugin's own
        words, _ = expectations(self.path.read_text(errors="replace"))
        no_cond = prog.condition is None
        kinds = {w for w in words if w in FINDING_WORDS}
        want_findings = bool(kinds) or ("ok" in words and no_cond)
        res = self._check(prog, flags=want_findings,
                          liveness=prog.expect_liveness is not None)
        wrong = _disagreements(res, prog.expect, kinds if want_findings else None)
        wrong += _liveness_disagreement(res)
        if wrong:
            raise Mismatch(wrong, _report(res))

    def _kernel(self, prog) -> None:
        from .runner import kernel_verdict

        agrees, detail, unknown, res = kernel_verdict(
            prog, _setting(self.config, "model"), int(_setting(self.config, "unroll")),
            float(_setting(self.config, "timeout")), _setting(self.config, "engine"))
        if agrees is None and unknown is None:  # a file with neither an expect line nor a condition
            raise Mismatch([f"not a kernel test ({detail}): add `// ptxmm: expect ...`"], _report(res))
        if unknown is not None or not agrees:  # unknown fails, as in `ptxmm test`
            what = [detail] + ([f"no verdict: {res.status_text or unknown}"] if unknown else [])
            raise Mismatch(what, _report(res))

    def _check(self, prog, flags: bool, liveness: bool):
        from ..queries.checker import check

        observe = _setting(self.config, "observe")
        return check(prog, _setting(self.config, "model"), engine=_setting(self.config, "engine"),
                     unroll=int(_setting(self.config, "unroll")), observe=observe,
                     verdict_only=observe == "condition" and prog.condition is not None, flags=flags,
                     timeout=float(_setting(self.config, "timeout")), liveness=liveness or None)

    def repr_failure(self, excinfo, style=None):
        from ..errors import PtxmmError

        e = excinfo.value
        if isinstance(e, Mismatch):
            return "\n".join([f"ptxmm: {self.path.name}: " + "; ".join(e.what), "", e.report])
        if isinstance(e, PtxmmError):
            return f"ptxmm: {e}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"ptxmm check {self.path.name} --model {_setting(self.config, 'model')}"


def _disagreements(res, expect: bool | None, kinds: set[str] | None) -> list[str]:
    out = []
    if expect is not None:
        if res.holds is None:
            out.append(f"no verdict: {res.status_text or res.status}")
        elif res.holds != expect:
            out.append(f"expected the condition to {'hold' if expect else 'fail'}, it "
                       f"{'holds' if res.holds else 'fails'}")
    if kinds is not None:
        found = {str(f.kind) for f in res.findings}
        if res.findings_status != "ok":
            out.append(f"findings not decided ({res.findings_status})")
        elif found != kinds:
            show = ", ".join(sorted(found)) or "none"
            out.append(f"expected findings {', '.join(sorted(kinds)) or 'none'}, found {show}")
    return out


def _liveness_disagreement(res) -> list[str]:
    """The ``.expect-liveness`` line against the liveness verdict (ptxmm check --liveness's
    ``liveness_agrees``); not decided is a failure, as an unknown verdict is."""
    if res.expected_liveness is None:
        return []
    if res.liveness_agrees is None:
        return [f"liveness not decided ({res.liveness or res.status}"
                f"{': ' + res.liveness_why if res.liveness_why else ''}), "
                f".expect-liveness {res.expected_liveness}"]
    if not res.liveness_agrees:
        got = "no execution hangs" if res.liveness == "terminates" else "an execution hangs"
        return [f"expected .expect-liveness {res.expected_liveness}, {got} (progress "
                f"{res.progress_model})"]
    return []


def _report(res) -> str:
    import io

    from ..report.termtext import Writer
    from ..report.text import render

    out = io.StringIO()
    render(res, Writer(out, colour=False))
    return out.getvalue()

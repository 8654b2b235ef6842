"""What keeps `ptxmm check` quick to start: the auto engine, the report without rich, the quick
exit of the ptxmm program, and nothing heavy imported on the check path."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.engines import AUTO_BRUTE_MAX, candidate_space, pick
from ptxmm.report.termtext import Writer, wants_colour
from ptxmm.semantics.builder import build
from ptxmm.semantics.vocab import candidates

MP = ROOT / "examples" / "mp-relaxed-acquire.ptx"
SPIN = ROOT / "examples" / "spinlock-cas.ptx"


def _space(path: Path, limit: int = 10**9) -> int | None:
    eg = build(ptxmm.load(str(path)))
    return candidate_space(eg, candidates(eg), limit)


def test_auto_engine_enumerates_tiny_spaces_and_solves_the_rest():
    mp, spin = ptxmm.load(str(MP)), ptxmm.load(str(SPIN))
    assert _space(MP) == 9  # two reads, each from the initial write, the store, or not at all
    assert ptxmm.check(mp).engine == "brute"
    assert _space(SPIN, AUTO_BRUTE_MAX) is None
    assert ptxmm.check(spin).engine == "z3"
    eg = build(mp)
    assert pick("auto", eg, candidates(eg), verdict_only=True) == "z3"  # one query, no enumeration
    assert pick("brute", eg, candidates(eg), verdict_only=False) == "brute"


def test_auto_engine_gives_the_solver_outcomes():
    for f in (MP, ROOT / "examples" / "classic" / "SB-fence-sc.ptx", SPIN):
        prog = ptxmm.load(str(f))
        auto, z3 = ptxmm.check(prog), ptxmm.check(prog, engine="z3")
        assert auto.outcome_set == z3.outcome_set and auto.holds == z3.holds


def test_candidate_space_counts_rf_choices_coherence_orders_and_paths():
    """MP: two reads with three rf choices each (the initial write, the store, or none: not run);
    2+2W: two writes per location, three coherence choices each; a limit cuts the count short."""
    assert _space(MP) == 3 * 3
    assert _space(ROOT / "examples" / "classic" / "2+2W-relaxed.ptx") == 3 * 3
    assert _space(ROOT / "examples" / "classic" / "2+2W-fence-sc.ptx") == 3 * 3 * 2  # 2 sc orders
    assert _space(MP, limit=8) is None


def test_report_is_plain_off_a_terminal_and_coloured_on_request(monkeypatch):
    buf = io.StringIO()
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert not wants_colour(buf)
    w = Writer(buf)
    w.line("a ", ("b", "bold green"))
    w.table(["#", "x", "flags"], [["1", "42", ("", "yellow")], ["2", "7", ("race", "yellow")]], "rrl")
    assert buf.getvalue().splitlines() == ["a b", "#   x  flags", "1  42", "2   7  race"]
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[1;32mb\x1b[0m" in _line(("b", "bold green"))
    monkeypatch.setenv("NO_COLOR", "1")
    assert _line(("b", "bold green")) == "b\n"


def _line(*segs) -> str:
    buf = io.StringIO()
    Writer(buf).line(*segs)
    return buf.getvalue()


def test_check_path_imports_neither_rich_nor_the_solver_for_a_tiny_test():
    code = ("import sys; from ptxmm.cli.main import main\n"
            "try:\n    main(['check', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('rich', 'z3', 'networkx') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(MP)], capture_output=True, text=True,
                         cwd=ROOT).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_the_ptxmm_program_exits_quickly_with_every_line_and_the_right_code(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "ptxmm", *a], capture_output=True,  # noqa: E731
                                    text=True, cwd=ROOT)
    ok = run("check", str(MP))
    assert ok.returncode == 0 and ok.stdout.rstrip().endswith("✓ agrees")
    bad = tmp_path / "bad.ptx"
    bad.write_text(MP.read_text().replace("st.relaxed.gpu", "st.relase.gpu"))
    res = run("check", str(MP), str(bad), "--json")
    assert res.returncode == 2 and '"error"' in res.stdout and "relase" in res.stderr
    assert run("nosuchcommand").returncode == 2


def test_a_parallel_batch_exits_and_closes_its_output():
    """`ptxmm test -j 2` shuts its worker pool down before the quick exit: with the pool left to
    interpreter teardown, os._exit could leave workers holding the output pipe (a reader such as
    `| tail` then waited forever) or hang in multiprocessing's exit handler."""
    for _ in range(3):
        r = subprocess.run([sys.executable, "-m", "ptxmm", "test", str(ROOT / "examples" / "classic"),
                            "-j", "2"], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert r.returncode == 0, r.stderr
        assert "agree" in r.stdout and "Exception" not in r.stderr


# ----- program.py's @record: the same classes as @dataclass(frozen=True), cheaper to create -------

_IR = ("instructions", "program")  # ptxmm.ir's modules of records (program re-exports the IR)


def _dataclass_twin_module():
    """ir/instructions.py and ir/program.py with every ``@record`` written back as
    ``@dataclass(frozen=True)``; the program twin imports the instructions twin."""
    import importlib

    for name in _IR:
        mod = importlib.import_module(f"ptxmm.ir.{name}")
        src = Path(mod.__file__).read_text()
        src = src.replace("@record(kw_only=True)\n", "@dataclass(frozen=True, kw_only=True)\n")
        src = src.replace("@record\n", "@dataclass(frozen=True)\n")
        src = src.replace("from .._infra.records import record\n", "from dataclasses import dataclass\n")
        src = src.replace("from .instructions import (", "from .instructions_twin import (")
        assert "\n@record" not in src
        twin = f"ptxmm.ir.{name}_twin"
        sys.modules[twin] = type(sys)(twin)  # dataclass looks it up
        sys.modules[twin].__dict__.update({"__name__": twin, "__package__": "ptxmm.ir"})
        exec(compile(src, f"{name}_twin.py", "exec"), sys.modules[twin].__dict__)
    return sys.modules["ptxmm.ir.program_twin"]


def _records() -> list[str]:
    import dataclasses
    import importlib

    out = []
    for name in _IR:
        mod = importlib.import_module(f"ptxmm.ir.{name}")
        out += [n for n, c in vars(mod).items() if isinstance(c, type) and dataclasses.is_dataclass(c)
                and c.__module__ == mod.__name__]
    return sorted(out)


def test_every_class_of_the_program_ir_is_a_record():
    import ptxmm.ir.program as mod

    names = _records()
    assert len(names) >= 36 and {"Program", "Load", "Instr", "TrueC", "Reg"} <= set(names)
    assert mod.Load.__init__.__qualname__ == "Load.__init__"  # record's, not dataclass's exec'd one
    assert mod.Program.__doc__ == ("Program(name: 'str', threads: 'tuple[Thread, ...]', locations: "
                                   "'tuple[Location, ...]', condition: 'Condition | None', description:"
                                   " 'str' = '', expect: 'bool | None' = None, file: 'str' = '<string>', "
                                   "format: 'str' = 'ptx', expect_liveness: 'bool | None' = None, "
                                   "observed: 'tuple[Ref, ...] | None' = None, filter: 'CondExpr | None' = "
                                   "None, warnings: 'tuple' = (), layout: 'Layout | None' = None, kernel: "
                                   "'KernelInfo | None' = None)")
    assert mod.Atom.__doc__.startswith("``atom.op``")  # a class's own docstring stays


def _field_spec(cls) -> list[tuple]:
    import dataclasses

    return [(f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.compare, f.hash, f.kw_only)
            for f in dataclasses.fields(cls)]


# field values: hashable, some equal to each other, some equal to a default
_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from(["", "u32", "x", "gpu"]),
                    st.tuples(st.integers(0, 2), st.sampled_from(["a", "b"])))


@pytest.mark.parametrize("name", _records())
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_record_behaves_as_the_frozen_dataclass(name, data):
    """Fields, __match_args__, __init__ (positional and keyword, defaults, factories, the errors),
    repr, ==, hash (the same values), immutability, dataclasses.replace and pickling: as
    @dataclass(frozen=True) on the same class body."""
    import dataclasses
    import inspect
    import pickle

    import ptxmm.ir.program as mod

    twin = _TWIN.__dict__[name]
    rec = getattr(mod, name)
    assert _field_spec(rec) == _field_spec(twin)
    assert rec.__match_args__ == twin.__match_args__
    assert inspect.signature(rec) == inspect.signature(twin)
    flds = dataclasses.fields(rec)

    def kwargs(drop: bool) -> dict:
        kw = {}
        for f in flds:
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            if (required and not drop) or data.draw(st.booleans()):
                kw[f.name] = data.draw(_VALUES)
        return kw

    def build(cls, kw: dict, n_pos: int):
        pos = [kw.pop(n) for n in cls.__match_args__[:n_pos] if n in kw]
        return cls(*pos, **kw)

    def both(kw: dict, n_pos: int):
        out = []
        for cls in (rec, twin):
            try:
                out.append(build(cls, dict(kw), n_pos))
            except TypeError:
                out.append(TypeError)
        return out

    n_pos = data.draw(st.integers(0, len(rec.__match_args__) + 1))
    r1, t1 = both(kwargs(drop=data.draw(st.booleans())), n_pos)
    assert (r1 is TypeError) == (t1 is TypeError)
    if r1 is TypeError:
        return
    assert repr(r1) == repr(t1) and hash(r1) == hash(t1)
    assert vars(r1) == vars(t1) and list(vars(r1)) == list(vars(t1))
    r2, t2 = both(kwargs(drop=False), 0)
    assert (r1 == r2) == (t1 == t2) and (r1 != r2) == (t1 != t2)
    assert r1 == build(rec, dict(vars(r1)), 0) and r1 != t1  # another class is never equal
    assert (r1 == 5) is False
    with pytest.raises(TypeError):
        rec(**vars(r1), nosuchfield=1)
    with pytest.raises(TypeError):
        rec(*range(len(rec.__match_args__) + 1))
    for obj in (r1, t1):
        with pytest.raises(dataclasses.FrozenInstanceError):
            obj.not_a_field = 1
    for f in flds:
        for obj in (r1, t1):
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(obj, f.name, 1)
            with pytest.raises(dataclasses.FrozenInstanceError):
                delattr(obj, f.name)
        v = data.draw(_VALUES)  # one field changed: equal and hash equal exactly when the twin's are
        r3, t3 = dataclasses.replace(r1, **{f.name: v}), dataclasses.replace(t1, **{f.name: v})
        assert repr(r3) == repr(t3) and (r3 == r1) == (t3 == t1) and hash(r3) == hash(t3)
    assert pickle.loads(pickle.dumps(r1)) == r1


_TWIN = _dataclass_twin_module()


# ----- the front ends' parsers: lexer regexes compiled once per Python, not once per process -------

from ptxmm._infra import lark_build  # noqa: E402

_ATOMS = st.sampled_from(["a", "ab", "[0-9]+", r"\.", r"%r[0-9]+", "x|y", "(?:ab)*c", r"\w+", "[^;]", "é"])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(atoms=st.lists(_ATOMS, min_size=1, max_size=6), flags=st.sampled_from([0, re.M, re.I]),
       probes=st.lists(st.text(alphabet="abcxy0129.%r;é_ ", max_size=8), max_size=8))
def test_a_stored_regex_is_the_pattern_re_compiles(tmp_path_factory, atoms, flags, probes):
    """A pattern compiled from the store in another process (here: another store reading the
    file) is equal to re.compile's — CPython compares flags, code and text — and matches alike."""
    path = tmp_path_factory.mktemp("rx") / "g.pickle"
    pattern = "|".join(f"(?P<T{i}>{a})" for i, a in enumerate(atoms))
    first = lark_build.RegexStore(path)
    assert first.compile(pattern, flags) == re.compile(pattern, flags) and first.added == 1
    first.save()
    second = lark_build.RegexStore(path)
    got, want = second.compile(pattern, flags), re.compile(pattern, flags)
    assert second.hits == 1 and second.added == 0
    assert got == want and got.groups == want.groups and got.groupindex == want.groupindex
    for s in probes:
        m, n = got.match(s), want.match(s)
        assert (m and (m.group(0), m.lastgroup)) == (n and (n.group(0), n.lastgroup))


def test_a_store_of_another_python_or_damaged_is_not_used(tmp_path):
    import pickle

    path = tmp_path / "g.pickle"
    store = lark_build.RegexStore(path)
    store.compile("a+|b", 0)
    store.save()
    header, codes = pickle.loads(path.read_bytes())
    path.write_bytes(pickle.dumps((("2.7.18",) + header[1:], codes)))
    assert lark_build.RegexStore(path).codes == {}
    path.write_bytes(b"not a pickle")
    assert lark_build.RegexStore(path).codes == {}
    bad = {k: (v[0], [0, 1, 2], *v[2:]) for k, v in codes.items()}  # code _sre refuses
    path.write_bytes(pickle.dumps((header, bad)))
    store = lark_build.RegexStore(path)
    assert store.compile("a+|b", 0) == re.compile("a+|b") and store.hits == 0
    with pytest.raises(re.error):  # errors are re's own
        store.compile("(", 0)


def _corpus(tmp: Path) -> list[Path]:
    """The bundled .ptx tests, and the .litmus tests ``ptxmm gen --size 4`` writes (into ``tmp``):
    no corpus from outside the repository (the Dat3M one beside it is not needed)."""
    from ptxmm.campaigns.edges import EdgeError
    from ptxmm.campaigns.gen import GenOptions, generate

    (tmp / "gen").mkdir()
    for k, g in enumerate(generate(GenOptions(size=4))):
        try:
            (tmp / "gen" / f"{k}.litmus").write_text(g.text("litmus"))
        except EdgeError:  # an address dependency has no .litmus spelling
            pass
    return sorted([*(ROOT / "tests" / "litmus").rglob("*.ptx"), *(ROOT / "examples").rglob("*.ptx"),
                   *(tmp / "gen").glob("*.litmus")])


@pytest.mark.parametrize("grammar, options", [
    ("ptx.lark", {"parser": "lalr", "maybe_placeholders": False}),
    ("litmus.lark", {"parser": "lalr", "propagate_positions": True, "lexer": "contextual"})])
def test_the_parsers_read_every_file_as_lark_alone_does(tmp_path, monkeypatch, grammar, options):
    """Every bundled .ptx test, every .litmus test ptxmm gen writes, and each cut short (a
    syntax error): the same tree, or the same error at the same place and with the same expected
    terminals, with the parser loaded from its pickle and the lexers' regexes from a warm store as
    with Lark alone (the parser is the runtime's: its trees and errors are the runtime's classes)."""
    import lark

    from ptxmm._infra import larkrt
    from ptxmm._infra.resources import data_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    suffix = ".ptx" if grammar == "ptx.lark" else ".litmus"
    files = [f for f in _corpus(tmp_path) if f.suffix == suffix]
    assert len(files) > 100 or (suffix == ".litmus" and not files)
    plain = lark.Lark((data_dir("grammar") / grammar).read_text(), cache=True, **options)
    cold = lark_build.build(grammar, **options)
    for f in files[:20]:
        _parse(cold, f.read_text())
    for store in {id(lx.re): lx.re for lx in lark_build._basic_lexers(cold)}.values():
        store.save()

    def not_built(*args, **kw):
        raise AssertionError("the parser was built, not loaded")

    with monkeypatch.context() as m:
        m.setattr(lark.Lark, "__init__", not_built)
        warm = lark_build.build(grammar, **options)  # the pickle of the parser cold was built as
    assert len(list((tmp_path / "ptxmm" / "parsers").glob("*.pickle"))) == 1
    assert isinstance(warm, larkrt.Lark) and not isinstance(warm, lark.Lark)
    for f in files:
        text = f.read_text()
        for t in (text, text[: len(text) // 2], text[: len(text) // 3]):
            assert _parse(warm, t) == _parse(plain, t), f
    store = lark_build._basic_lexers(warm)[0].re
    assert isinstance(store, lark_build.RegexStore) and store.hits > 0
    assert all(lx.re is store for lx in lark_build._basic_lexers(warm))


def _parse(parser, text: str):
    import lark

    from ptxmm._infra import larkrt

    try:
        return parser.parse(text)
    except (lark.exceptions.LarkError, larkrt.LarkError) as e:
        expected = getattr(e, "expected", None) or getattr(e, "allowed", None) or ()
        return (type(e).__name__, getattr(e, "line", None), getattr(e, "column", None),
                sorted(expected), str(getattr(e, "token", "")))


# ----- what `ptxmm check` imports, and ptxmm.explain loaded on first use ---------------------------

RACE_FREE = ROOT / "examples" / "classic" / "2+2W-relaxed.ptx"  # no outcome raises a flag


def _modules_after(code: str, *args: str) -> set[str]:
    code += "\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.strip().splitlines()[-1].split())


def test_a_check_loads_neither_explain_nor_the_other_commands():
    """Races are findings of the engine: a check with races loads no more than one without."""
    code = ("import sys; from ptxmm.cli.main import main\n"
            "try:\n    main(['check', sys.argv[1]])\nexcept SystemExit:\n    pass")
    for f in (RACE_FREE, MP):
        mods = _modules_after(code, str(f))
        assert "ptxmm.queries.checker" in mods and "ptxmm.syntax.ptx" in mods  # it did check
        assert not mods & {"ptxmm.explanation.explain", "ptxmm.explanation.evaluate", "ptxmm.cli.explain",
                           "ptxmm.explanation.graph", "ptxmm.explanation.fix", "ptxmm.report.jsonout", "json",
                           "rich", "z3"}
    assert not _modules_after("import ptxmm") & {"ptxmm.explanation.explain", "ptxmm.cli.main", "click"}


def test_ptxmm_explain_is_the_function_whoever_loads_the_module_first():
    """No submodule is named explain: loading ptxmm.explanation.explain first changes nothing."""
    code = ("import sys, ptxmm\n"
            "assert 'ptxmm.explanation.explain' not in sys.modules and 'explain' in dir(ptxmm)\n"
            "from ptxmm.explanation.explain import races_in\n"  # the submodule first, by another name
            "assert callable(ptxmm.explain) and ptxmm.explain.__module__ == 'ptxmm.explanation.explain'\n"
            "from ptxmm import Explanation, explain\n"
            "assert explain is sys.modules['ptxmm.explanation.explain'].explain\n"
            "assert Explanation is sys.modules['ptxmm.explanation.explain'].Explanation\n"
            "x = ptxmm.explain(ptxmm.load(sys.argv[1]))\n"
            "assert type(x) is Explanation and x.allowed")
    assert "ptxmm.explanation.explain" in _modules_after(code, str(MP))
    code = "import ptxmm\ntry:\n    ptxmm.nosuchname\nexcept AttributeError:\n    pass"
    assert "ptxmm.explanation.explain" not in _modules_after(code)


def test_explain_and_graph_are_commands_loaded_when_named():
    from click.testing import CliRunner

    from ptxmm.cli.main import main

    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0 and "explain" in r.output and "graph" in r.output
    r = CliRunner().invoke(main, ["explain", str(MP)])
    assert r.exit_code == 0 and "ALLOWED" in r.output
    r = CliRunner().invoke(main, ["graph", "--ascii", str(MP)])
    assert r.exit_code == 0, r.output
    assert CliRunner().invoke(main, ["nosuch"]).exit_code == 2


def test_python_m_ptxmm_cli_builds_the_commands_once():
    """`python -m ptxmm.cli` runs ptxmm.cli.main's program (cli/__main__.py), not a second copy as
    __main__."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "ptxmm.cli", "check", str(MP)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("✓ agrees")
    assert [ln.split("|")[-1].strip() for ln in r.stderr.splitlines()].count("ptxmm.cli.main") == 1


# ----- `check --json`: each outcome written as it comes, the same JSON as CheckResult.to_json() ---

from ptxmm.report.jsonout import BatchWriter, write_result  # noqa: E402

UNREACHABLE = ".global .u32 x = 0;\n.thread T0 { bra END; st.global.u32 [x], 1; END: }\nexists (x == 1)\n"


def _written(res, pad: str = "") -> str:
    buf = io.StringIO()
    write_result(res, buf, pad)
    return buf.getvalue()


def _same_json(text: str, want: dict) -> None:
    import json

    got = json.loads(text)
    assert got == want
    assert list(got) == list(want)  # the fields in to_json's order
    for g, w in zip(got["outcomes"], want["outcomes"]):
        assert list(g) == list(w)


@pytest.mark.slow  # every bundled example (~30 s); the default run: the test below, on three programs
def test_the_written_json_is_to_json_for_every_bundled_example():
    real = ROOT / "examples" / "kernels" / "real"  # tests/kernel/test_real_corpus.py: some refused today
    files = sorted(f for f in (ROOT / "examples").rglob("*.ptx") if f.parent != real)
    assert len(files) > 30
    for f in files:
        res = ptxmm.check(ptxmm.load(str(f)))
        text = _written(res)
        _same_json(text, res.to_json())
        head, _, rest = text.partition('\n  "outcomes": ')
        assert head.startswith("{\n") and len(rest.splitlines()) > len(res.outcomes)  # one line each
        for line in rest.splitlines()[1:len(res.outcomes) + 1]:
            assert line.startswith('    {"values": ')


@pytest.mark.parametrize("kw", [{"observe": "condition", "verdict_only": True}, {"model": "sc"},
                                {"max_outcomes": 2}, {"engine": "z3"}])
def test_the_written_json_is_to_json_under_every_option(kw):
    for prog in (ptxmm.load(str(MP)), ptxmm.load(str(SPIN)), ptxmm.parse(UNREACHABLE, "u.ptx")):
        res = ptxmm.check(prog, **kw)
        _same_json(_written(res), res.to_json())
        _same_json(_written(res, "  ").replace("\n  ", "\n"), res.to_json())  # inside a list


def test_a_batch_is_one_object_for_one_file_else_a_list_in_order():
    import json

    res = [ptxmm.check(ptxmm.load(str(f))) for f in (MP, SPIN)]
    err = {"file": "x.ptx", "error": {"kind": "syntax error", "message": "m", "position": None,
                                      "hint": None}}
    for items in ([res[0]], [err], [res[0], err, res[1]], [err, err]):
        buf = io.StringIO()
        w = BatchWriter(buf, len(items))
        for it in items:
            w.add(it)
        w.close()
        want = [it if isinstance(it, dict) else it.to_json() for it in items]
        assert json.loads(buf.getvalue()) == (want[0] if len(items) == 1 else want)
        assert buf.getvalue().endswith("}\n" if len(items) == 1 else "}\n]\n") and w.written == len(items)
    w = BatchWriter(buf := io.StringIO(), 3)
    w.close()  # nothing done (Ctrl-C before the first file): still JSON
    assert json.loads(buf.getvalue()) == []


class _Sink(io.TextIOBase):
    """A stream that counts what it is given and keeps none of it."""

    def __init__(self):
        self.n = 0

    def write(self, s: str) -> int:
        self.n += len(s)
        return len(s)


def test_writing_holds_one_outcome_at_a_time_in_memory():
    """A result of 4,000 outcomes: encoding it whole (to_json, then json.dumps) holds MBs; writing
    it holds about one outcome (the check's own objects are there either way)."""
    import json
    import tracemalloc
    from dataclasses import replace

    base = ptxmm.check(ptxmm.load(str(MP)))
    big = replace(base, outcomes=base.outcomes * 1000)
    tracemalloc.start()
    try:
        sink = _Sink()
        write_result(big, sink)
        streamed = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        whole = len(json.dumps(big.to_json(), indent=2))
        built = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sink.n > 500_000 and whole > sink.n  # ~0.75 MB written, one line per outcome
    assert streamed < 100_000 and built > 50 * streamed


def test_ctrl_c_while_a_result_is_written_waits_for_its_end():
    import os
    import signal

    from ptxmm.report.jsonout import _sigint_deferred

    # Python's own handler, as a check started from a terminal has it (a background job starts
    # with SIGINT ignored, which Python keeps: the mutation tester runs the suite as one)
    was = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        done = []
        with pytest.raises(KeyboardInterrupt):
            with _sigint_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                done.append("after the signal")
        assert done == ["after the signal"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with _sigint_deferred():  # no signal: nothing raised
            done.append("quiet")
        assert done[-1] == "quiet"
    finally:
        signal.signal(signal.SIGINT, was)


def test_check_json_in_a_pipe_is_the_api_json(tmp_path):
    import json

    bad = tmp_path / "bad.ptx"
    bad.write_text("garbage\n")
    r = subprocess.run([sys.executable, "-m", "ptxmm", "check", "--json", str(MP), str(bad), str(SPIN)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2
    got = json.loads(r.stdout)
    assert [g.get("name") for g in got] == ["MP+relaxed+acquire", None, ptxmm.load(str(SPIN)).name]
    assert got[1]["error"]["kind"] == "syntax error"
    for g, f in ((got[0], MP), (got[2], SPIN)):
        want = ptxmm.check(ptxmm.load(str(f))).to_json()
        for d in (g, want):
            d.pop("time_s")
        assert g == want


def test_a_damaged_parser_pickle_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = lark_build.build("ptx.lark", parser="lalr", maybe_placeholders=False)
    (path,) = (tmp_path / "ptxmm" / "parsers").glob("*.pickle")
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])
    again = lark_build.build("ptx.lark", parser="lalr", maybe_placeholders=False)
    text = MP.read_text()
    assert again.parse(text) == first.parse(text)
    import lark

    with monkeypatch.context() as m:  # the damaged file was written anew: the next build loads it
        m.setattr(lark.Lark, "__init__", lambda *a, **kw: pytest.fail("built, not loaded"))
        assert lark_build.build("ptx.lark", parser="lalr", maybe_placeholders=False).parse(text) == \
            first.parse(text)
    other = lark_build.build("ptx.lark", parser="lalr", maybe_placeholders=True)  # another option
    assert len(list(path.parent.glob("*.pickle"))) == 2 and other.parse(text)


# ----- records.py's options and its fast __init__ path, against dataclass ------------------------

def _option_twins():
    from dataclasses import dataclass, field

    from ptxmm._infra.records import record

    def body(deco):
        @deco
        class Plain:
            a: int
            b: int = 2
            c: tuple = ()

        @deco
        class WithFactory:
            a: int
            b: list = field(default_factory=list)
            c: int = 3

        @deco
        class KwOnly:
            a: int
            b: int = field(default=1, kw_only=True)
            c: int = 0

        return Plain, WithFactory, KwOnly

    return [
        (body(record), body(dataclass(frozen=True))),
        (body(record(frozen=False)), body(dataclass)),
        (body(record(eq=False)), body(dataclass(frozen=True, eq=False))),
    ]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(which=st.integers(0, 2), cls=st.integers(0, 2), args=st.lists(st.integers(0, 3), max_size=4),
       kw=st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 3), max_size=3))
def test_record_options_and_fast_path_behave_as_dataclass(which, cls, args, kw):
    """Positional-only calls (the fast path), keywords, defaults, factories and keyword-only
    fields; frozen, mutable (unhashable, assignable) and identity-compared records: the same
    instances, errors, equality and hashability as the dataclass of the same options."""
    import dataclasses

    rec_cls, twin_cls = (pair[cls] for pair in _option_twins()[which])
    made = []
    for c in (rec_cls, twin_cls):
        try:
            made.append(c(*args, **kw))
        except TypeError:
            made.append(TypeError)
    r, t = made
    assert (r is TypeError) == (t is TypeError)
    if r is TypeError:
        return
    assert vars(r) == vars(t) and list(vars(r)) == list(vars(t))
    assert repr(r).split("(", 1)[1] == repr(t).split("(", 1)[1]
    again = rec_cls(*args, **kw)
    assert (again == r) == (which != 2)  # eq=False compares by identity
    assert (rec_cls.__hash__ is None) == (twin_cls.__hash__ is None)
    frozen = dataclasses.FrozenInstanceError
    for obj in (r, t):
        if which == 1:
            obj.a = 9
            assert obj.a == 9
        else:
            with pytest.raises(frozen):
                obj.a = 9
    if "b" in vars(r) and isinstance(r.b, list):
        assert r.b is not rec_cls(*args, **kw).b  # a factory's value is made per instance


def test_a_damaged_or_foreign_lark_runtime_file_is_written_afresh(tmp_path):
    """The runtime module in the cache (syntax/larkrt.py): a damaged file, or one another Lark
    wrote under the same name, is replaced, and the check still parses."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    probe = ("import ptxmm._infra.larkrt as r, ptxmm; print(r.runtime.__file__); "
             f"print(ptxmm.check({str(ROOT / 'examples' / 'mp-relaxed-acquire.ptx')!r}).holds)")
    first = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    path = Path(first.stdout.split()[0])
    assert path.is_file() and path.parent.parent == tmp_path / "ptxmm"
    for bad in ("this is not python (\n", "STAMP = 'another lark'\n"):
        path.write_text(bad)
        again = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
        assert again.returncode == 0 and again.stdout.split()[1] == "True", again.stderr
        assert "STAMP = 'another lark'" not in path.read_text() and "class Tree" in path.read_text()

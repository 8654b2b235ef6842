"""Issue 24, item 6: the Python API validates its arguments with typed errors (ptxmm.errors), in
the command line's words, accepts a path where a user expects one, and never ends in an
AttributeError on a wrong type."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.cli.main import main
from ptxmm.errors import ArgumentError, ArgumentTypeError, PtxmmError

MP = ROOT / "examples" / "mp-relaxed-acquire.ptx"
TINY = ".global .u32 x = 0;\n.thread T0 { st.global.u32 [x], 1; }\nexists (x == 1)\n"


@pytest.fixture(scope="module")
def prog():
    return ptxmm.parse(TINY, "t.ptx")


# ----- the exact inputs --------------------------------------------------------------------

def test_a_path_is_a_program():
    want = ptxmm.check(ptxmm.load(MP)).outcome_set
    assert ptxmm.check(str(MP)).outcome_set == want
    assert ptxmm.check(MP).outcome_set == want  # pathlib.Path
    assert ptxmm.explain(str(MP)).allowed is True


def test_model_as_a_path():
    res = ptxmm.check(MP, model=ROOT / "models" / "sc.cat")
    assert res.model == "sc" and res.holds is False


@pytest.mark.parametrize("call", [
    lambda p: ptxmm.check(None),
    lambda p: ptxmm.check(p, model=123),
    lambda p: ptxmm.check(p, model=None),
    lambda p: ptxmm.check(42),
    lambda p: ptxmm.explain(None),
    lambda p: ptxmm.explain(p, model=1.5),
    lambda p: ptxmm.explain(p, outcome=7),
], ids=["check(None)", "model=123", "model=None", "check(42)", "explain(None)", "explain model=1.5",
        "outcome=7"])
def test_wrong_types_are_typed_errors(prog, call):
    with pytest.raises(ArgumentTypeError) as e:
        call(prog)
    assert isinstance(e.value, TypeError) and isinstance(e.value, PtxmmError)
    assert "invalid value for" in e.value.message and e.value.hint


# the CLI's refusal for the same value: the API says the same words
SAME_WORDS = [
    ({"unroll": -1}, ["--unroll", "-1"]),
    ({"unroll": 65}, ["--unroll", "65"]),
    ({"observe": "everything"}, ["--observe", "everything"]),
    ({"engine": "fast"}, ["--engine", "fast"]),
    ({"max_outcomes": 0}, ["--max-outcomes", "0"]),
    ({"timeout": 0}, ["--timeout", "0"]),
    ({"timeout": -1.5}, ["--timeout", "-1.5"]),
]


@pytest.mark.parametrize("kw,cli", SAME_WORDS, ids=[str(k) for k, _ in SAME_WORDS])
def test_values_the_cli_refuses_are_refused_in_its_words(prog, kw, cli):
    with pytest.raises(ArgumentError) as e:
        ptxmm.check(prog, **kw)
    assert isinstance(e.value, ValueError) and not isinstance(e.value, TypeError)
    said = CliRunner().invoke(main, ["check", *cli, str(MP)]).output
    words = e.value.message.split(": ", 1)[1]  # "invalid value for unroll: <words>"
    assert words in said, (words, said)


@pytest.mark.parametrize("kw,words", [
    ({"unroll": -1}, "-1 is not in the range 0<=x<=64."),
    ({"fix_bound": 0}, "0 is not in the range x>=1."),
])
def test_explain_refuses_as_its_cli_does(prog, kw, words):
    with pytest.raises(ArgumentError, match=words.replace(".", r"\.").replace("<", "<")):
        ptxmm.explain(prog, **kw)


def test_program_text_given_as_a_path_gets_a_hint():
    with pytest.raises(ArgumentError) as e:
        ptxmm.check(TINY)
    assert "looks like program text" in e.value.message and "ptxmm.parse" in e.value.hint


def test_missing_file_is_located(tmp_path):
    with pytest.raises(PtxmmError, match="no such file"):
        ptxmm.check(str(tmp_path / "nope.ptx"))


def test_valid_edge_values_are_accepted(prog):
    assert ptxmm.check(prog, unroll=0).holds is True
    assert ptxmm.check(prog, unroll=64, max_outcomes=1, timeout=30).status in ("ok", "stopped")

    class Two:  # an integer type of another library (numpy's int64): it has __index__
        def __index__(self) -> int:
            return 2

    assert ptxmm.check(prog, unroll=Two()).holds is True


# ----- property: wrong values of any type never raise anything but PtxmmError ---------------------

ANY = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=300),
                st.binary(max_size=20), st.lists(st.integers(), max_size=3),
                st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                st.builds(Path, st.text(max_size=30)), st.just(object()), st.just(print))
CHECK_PARAMS = ["prog", "model", "engine", "unroll", "observe", "flags", "verdict_only",
                "max_outcomes", "progress", "timeout", "allow_no_axioms"]
EXPLAIN_PARAMS = ["prog", "model", "outcome", "unroll", "fix", "fix_bound"]


def _call(f, prog, name, value, **fixed):
    kw = dict(fixed)
    target = prog
    if name == "prog":
        target = value
    else:
        kw[name] = value
    try:
        f(target, **kw)
    except PtxmmError:
        pass  # typed, located or in the CLI's words: what a user may see


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(CHECK_PARAMS), value=ANY)
def test_check_never_raises_but_ptxmm_errors(prog, name, value):
    # a short timeout keeps an accepted huge unroll or max_outcomes quick
    fixed = {} if name == "timeout" else {"timeout": 5.0}
    _call(ptxmm.check, prog, name, value, **fixed)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(EXPLAIN_PARAMS), value=ANY)
def test_explain_never_raises_but_ptxmm_errors(prog, name, value):
    _call(ptxmm.explain, prog, name, value, **({} if name == "fix_bound" else {"fix_bound": 5}))


@pytest.mark.parametrize("model", ["a" * 300 + ".cat", "/" + "a" * 300, "x\x00.cat", ""])
def test_model_names_the_file_system_refuses(prog, model):
    with pytest.raises(ArgumentError, match="invalid value for model"):
        ptxmm.check(prog, model=model)
    if "\x00" not in model and model:  # (a NUL cannot be a command-line argument)
        r = CliRunner().invoke(main, ["check", "--model", model, str(MP)])
        assert r.exit_code == 2 and "invalid value for model" in r.output, r.output


def test_program_path_with_a_nul_is_an_argument_error():
    with pytest.raises(ArgumentError, match="is not a valid path"):
        ptxmm.check("x\x00.ptx")


def test_a_path_with_a_brace_is_still_a_path(tmp_path):
    d = tmp_path / "a{b}"
    d.mkdir()
    (d / "m.ptx").write_text(TINY)
    assert ptxmm.check(str(d / "m.ptx")).holds is True
    with pytest.raises(ArgumentError, match="looks like program text"):
        ptxmm.check(TINY.replace("\n", " "))  # one-line program text, no such file


# ----- red team round 4: F17, F24, F25 -------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(progress_model="obe"),
                                dict(progress_model="gpu=obe,cta=fair", liveness=False)])
def test_a_progress_model_without_liveness_is_refused(prog, kw):
    """As the CLI refuses --progress without --liveness; the default (fair) is fine."""
    with pytest.raises(ArgumentError, match="does not apply without liveness"):
        ptxmm.check(prog, **kw)
    assert ptxmm.check(prog, progress_model="fair").status == "ok"
    assert ptxmm.check(prog, progress_model="obe", liveness=True).status == "ok"


def test_a_launch_on_a_litmus_file_is_refused():
    from ptxmm.kernel.kernels import KernelArgs

    for kernel in ("k<<<1,1>>>(int o[1])", KernelArgs(launch="k<<<1,1>>>(int o[1])")):
        with pytest.raises(ArgumentError, match="--launch applies only to kernel files"):
            ptxmm.load(MP, kernel=kernel)
    with pytest.raises(ArgumentTypeError, match="invalid value for kernel: 5"):
        ptxmm.load(MP, kernel=5)


@pytest.mark.parametrize("path", [str(MP).encode(), 3, None])
def test_load_of_a_path_of_the_wrong_type_is_a_typed_error(path):
    with pytest.raises(ArgumentTypeError, match="invalid value for path: .* is not a file path"):
        ptxmm.load(path)


LITMUS = """PTX MP
{
x=0;
y=0;
}
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.weak x, 1        | ld.acquire.gpu r0, y ;
 st.release.gpu y, 1 | ld.weak r1, x        ;
exists
(P1:r0 == 1 /\\ P1:r1 == 0)
"""


@pytest.mark.parametrize(("suffix", "text", "bad", "pos"),
                         [(".ptx", TINY, ("x = 0", "x = @"), (1, 18)),
                          (".litmus", LITMUS, ("x=0", "x=@"), (3, 3))])
def test_a_byte_order_mark_is_skipped_positions_kept(tmp_path, suffix, text, bad, pos):
    """A UTF-8 BOM (an editor's) is skipped, and an error on the first line is where an editor
    shows it."""
    f = tmp_path / f"t{suffix}"
    f.write_text("\ufeff" + text, encoding="utf-8")
    assert ptxmm.check(ptxmm.load(f)).status == "ok"
    f.write_text("\ufeff" + text.replace(*bad), encoding="utf-8")
    with pytest.raises(PtxmmError) as e:
        ptxmm.load(f)
    assert (e.value.pos.line, e.value.pos.col) == pos


def test_a_model_file_with_a_byte_order_mark(tmp_path, prog):
    cat = tmp_path / "sc-bom.cat"
    cat.write_text("\ufeff" + (ROOT / "models" / "sc.cat").read_text(), encoding="utf-8")
    assert ptxmm.check(prog, model=cat).holds is True

"""What a small check does without (issue 41, "start-up stays ≤ 100 ms"): the kernel reader, the
device presets and commands, fractions, difflib and random; Lark's grammar compiler (each front
end's parser is a pickle, the Dat3M one with its custom lexer too); the cat parser (the model and
the engine's reference axioms are parsed once per install). Each guard runs a fresh process with
its own cache directory: once to fill the cache, then the run that is checked."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

from ptxmm.cat import parser as cat_parser
from ptxmm.errors import ModelError

PTX = ROOT / "examples" / "mp-release-acquire.ptx"
MP_LITMUS = """PTX MP
{
x=0; y=0;
P1:r0=0; P1:r1=0;
}
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.weak x, 1        | ld.acquire.gpu r0, y ;
 st.release.gpu y, 1 | ld.weak r1, x        ;
exists (P1:r0 = 1 /\\ P1:r1 = 0)
"""

# never loaded by a small check (ptxmm.kernel.info, a few records the site queries read, is)
NOT_LOADED = {"ptxmm.kernel.module", "ptxmm.kernel.launch", "ptxmm.kernel.threads",
              "ptxmm.kernel.module.lowering", "ptxmm.device.env", "ptxmm.cli.device", "fractions",
              "decimal", "difflib", "random", "lark", "z3", "rich", "ptxmm.explanation.explain",
              "click.testing", "click.shell_completion"}

_CHECK = ("import sys\nfrom ptxmm.cli.main import main\n"
          "try:\n    main(['check', *sys.argv[1:]])\nexcept SystemExit:\n    pass\n"
          "from ptxmm.cat import parser\n"
          "print('cat-parser-built', parser._parser.cache_info().currsize)\n"
          "print(' '.join(sorted(sys.modules)))")


def _answer(out: str) -> str:
    """The output less its timings and the cat-parser line."""
    out = re.sub(r"time [0-9.]+ m?s|\"time_s\": [0-9.e-]+", "time", out)
    return "\n".join(ln for ln in out.splitlines() if not ln.startswith("cat-parser-built"))


def _run(code: str, cache: Path, *args: str) -> tuple[str, set[str]]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache),
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
                       env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    return "\n".join(lines[:-1]), set(lines[-1].split())


@pytest.mark.parametrize("json", [False, True])
def test_a_ptx_check_loads_nothing_it_does_not_use(tmp_path, json):
    args = (["--json"] if json else []) + [str(PTX)]
    first, _ = _run(_CHECK, tmp_path, *args)  # fills the cache
    out, mods = _run(_CHECK, tmp_path, *args)
    assert _answer(out) == _answer(first)  # the same answer, from the cache
    assert ("FORBIDDEN" in out) != json and "ptxmm.queries.checker" in mods  # it did check
    assert "cat-parser-built 0" in out
    assert not mods & NOT_LOADED, mods & NOT_LOADED


def test_a_dat3m_check_needs_neither_lark_nor_the_cat_parser_once_cached(tmp_path):
    f = tmp_path / "MP.litmus"
    f.write_text(MP_LITMUS)
    first, first_mods = _run(_CHECK, tmp_path / "cache", str(f))
    assert "lark" in first_mods  # the first run builds the parser's tables with Lark
    out, mods = _run(_CHECK, tmp_path / "cache", str(f))
    assert _answer(out) == _answer(first) and "3 allowed outcome(s)" in out
    assert "ptxmm.syntax.litmus" in mods and "cat-parser-built 0" in out
    assert not mods & NOT_LOADED, mods & NOT_LOADED


def test_the_cli_module_alone_loads_no_command_elsewhere(tmp_path):
    code = "import ptxmm.cli.main\nprint(' '.join(__import__('sys').modules))"
    _run(code, tmp_path)  # fills the cache (the Lark runtime module)
    _, mods = _run(code, tmp_path)
    unused = NOT_LOADED | {"ptxmm.syntax.ptx", "ptxmm.syntax.litmus", "ptxmm.cli.explain",
                           "ptxmm.cli.campaigns", "ptxmm.cli.serve", "ptxmm.engines.brute"}
    assert "click" in mods and not mods & unused, mods & unused


# ----- the engine's cat texts, parsed once per install --------------------------------------------

REFERENCE = "let a = rf ; co\nempty (a \\ id) as Ref"


@pytest.fixture
def fresh_snippets(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cat_parser._snippets.cache_clear()
    yield tmp_path / "ptxmm" / "models"
    cat_parser._snippets.cache_clear()


def test_a_cached_snippet_is_the_parse_and_a_damaged_store_is_a_miss(fresh_snippets, monkeypatch):
    parsed = cat_parser.parse_stmts(REFERENCE, "<test-reference>")
    (store,) = fresh_snippets.glob("snippets-*.pickle")
    cat_parser._snippets.cache_clear()  # another process: read from the store, no parser
    monkeypatch.setattr(cat_parser, "_parser", lambda: pytest.fail("parsed again"))
    assert cat_parser.parse_stmts(REFERENCE, "<test-reference>") == parsed
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(fresh_snippets.parents[1]))
    for damage in (b"", b"not a pickle", store.read_bytes()[:40]):
        store.write_bytes(damage)
        cat_parser._snippets.cache_clear()
        assert cat_parser.parse_stmts(REFERENCE, "<test-reference>") == parsed


def test_only_ptxmm_own_texts_are_stored_and_errors_are_not(fresh_snippets):
    cat_parser.parse_stmts(REFERENCE, "model.cat")  # a user's file: never stored
    assert not list(fresh_snippets.glob("snippets-*.pickle"))
    with pytest.raises(ModelError):
        cat_parser.parse_stmts("let = ;", "<broken>")
    assert not list(fresh_snippets.glob("snippets-*.pickle"))
    cat_parser._snippets.cache_clear()
    with pytest.raises(ModelError):  # still an error, located, in a fresh process
        cat_parser.parse_stmts("let = ;", "<broken>")


def test_a_snippet_keyed_by_its_text_and_file(fresh_snippets):
    a = cat_parser.parse_stmts(REFERENCE, "<a>")
    b = cat_parser.parse_stmts(REFERENCE.replace("Ref", "Other"), "<a>")
    c = cat_parser.parse_stmts(REFERENCE, "<c>")
    cat_parser._snippets.cache_clear()
    assert cat_parser.parse_stmts(REFERENCE, "<a>") == a
    assert cat_parser.parse_stmts(REFERENCE.replace("Ref", "Other"), "<a>") == b != a
    assert cat_parser.parse_stmts(REFERENCE, "<c>") == c
    assert {st.pos.file for st in c if st.pos is not None} == {"<c>"}


def test_the_lark_runtime_module_is_compiled_once_even_where_python_writes_no_bytecode(tmp_path):
    """PYTHONDONTWRITEBYTECODE: Python would compile the runtime's 110 kB of source at every start
    (~35 ms); its bytecode is written beside it in ptxmm's cache. A damaged one still works
    (Python compiles the source instead)."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    code = "import ptxmm._infra.larkrt as L; print(L.runtime.__spec__.cached)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    pyc = Path(r.stdout.strip())
    assert pyc.is_file() and pyc.parent.parent == tmp_path / "ptxmm" / "lark-runtime"
    pyc.write_bytes(b"damaged")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip() == str(pyc), r.stderr


def test_the_quick_ptx_paths_patterns_are_what_re_compiles(tmp_path):
    """syntax/ptx_fast.py's patterns come from the regex store (compiled code kept in the cache):
    each equal to re.compile's (CPython compares a pattern's flags, code and text), in a process
    that stored them and in one that read them back."""
    code = ("import re, ptxmm.syntax.ptx_fast as f\n"
            "pats = [v for v in vars(f).values() if isinstance(v, re.Pattern)]\n"
            "assert len(pats) >= 10 and all(p == re.compile(p.pattern) for p in pats)\n"
            "print(f._re.hits, f._re.added)\nprint('-')")
    first, _ = _run(code, tmp_path)
    again, _ = _run(code, tmp_path)
    assert first == "0 10" and again == "10 0"  # stored by the first process, read by the second

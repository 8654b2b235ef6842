"""``explain --fix`` on a kernel speaks CUDA (issue 42, item 5): each fix is the edit of the CUDA line
its PTX instruction came from (ptxmm.kernel.cuda_edits, ptxmm.explanation.advice), the PTX edit a
detail beneath it, equal edits said once; a wrong launch names parameters as the source does."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from support.kernel_corpus import directives, expected

import ptxmm
from ptxmm.errors import SemanticError, SourcePos
from ptxmm.explanation.advice import cuda_edit, fix_lines
from ptxmm.explanation.fix import Change, FixReport, Solution, single_changes
from ptxmm.kernel.cuda_edits import access_edit, fence_code, fence_edit, fence_insert
from ptxmm.kernel.demangle import c_type, param_label, signature

ROOT = Path(__file__).resolve().parents[2]
KERNELS = sorted([*ROOT.glob("examples/kernels/*.cu"), *ROOT.glob("examples/kernels/real/*.cu")])
BROKEN = [cu for cu in KERNELS if "expect" in directives(cu) and expected(cu)]


def _at(tmp_path: Path, text: str, line: int = 3):
    """A program stand-in (no kernel info) and a PTX position whose CUDA line is ``line`` of a
    file holding ``text`` there."""
    f = tmp_path / "k.cu"
    lines = ["// head", "__global__ void k(int *data, int *flag) {", "", "}"]
    lines[line - 1] = text
    f.write_text("\n".join(lines) + "\n")
    pos = SimpleNamespace(src=SourcePos(str(f), line, 1))
    return SimpleNamespace(kernel=None), pos


@pytest.mark.parametrize("text, old, new, want", [
    ("f.store(1, cuda::std::memory_order_relaxed);", ("relaxed", "gpu"), ("release", "gpu"),
     "`f.store(1, cuda::std::memory_order_relaxed);` → `f.store(1, cuda::std::memory_order_release);`"),
    ("while (f.load(cuda::memory_order_relaxed) != 1) {}", ("relaxed", "gpu"), ("acquire", "gpu"),
     "`while (f.load(cuda::memory_order_relaxed) != 1) {}` → "
     "`while (f.load(cuda::memory_order_acquire) != 1) {}`"),
    ("cuda::atomic_ref<int, cuda::thread_scope_block>(flag[0]).store(1, cuda::memory_order_release);",
     ("release", "cta"), ("release", "gpu"),
     "→ `cuda::atomic_ref<int, cuda::thread_scope_device>(flag[0]).store(1, cuda::memory_order_release);`"),
    ("atomicAdd(&hist[v], 1u);", ("relaxed", "gpu"), ("relaxed", "sys"),
     "`atomicAdd(&hist[v], 1u);` → `atomicAdd_system(&hist[v], 1u);`"),
    ("atomicAdd_block(&hist[v], 1u);", ("relaxed", "cta"), ("relaxed", "gpu"),
     "`atomicAdd_block(&hist[v], 1u);` → `atomicAdd(&hist[v], 1u);`"),
    ("data[0] = 42;", ("weak", None), ("release", "gpu"),
     "`data[0] = 42;` → `cuda::atomic_ref<T, cuda::thread_scope_device>(data[0]).store(42, "
     "cuda::memory_order_release);`"),
    ("int d = data[0];", ("weak", None), ("acquire", "gpu"),
     "`int d = data[0];` → `int d = cuda::atomic_ref<int, cuda::thread_scope_device>(data[0])"
     ".load(cuda::memory_order_acquire);`"),
    ('asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v));', ("relaxed", "gpu"),
     ("release", "gpu"), '→ `asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v));`'),
])
def test_an_access_change_is_the_edit_of_its_cuda_line(tmp_path, text, old, new, want):
    op = "atom" if "atomic" in text and "Add" in text else "ld" if "load" in text or "int d" in text else "st"
    prog, pos = _at(tmp_path, text)
    e = access_edit(prog, pos, op, old, new, "PTX")
    assert (Path(e.file).name, e.line) == ("k.cu", 3)
    assert want in e.text


def test_the_scope_of_an_atomic_declared_earlier_is_edited_at_its_declaration(tmp_path):
    f = tmp_path / "k.cu"
    f.write_text("__global__ void k(int *flag) {\n"
                 "  cuda::atomic_ref<int, cuda::thread_scope_block> f(flag[0]);\n"
                 "  f.store(1, cuda::std::memory_order_release);\n}\n")
    pos = SimpleNamespace(src=SourcePos(str(f), 3, 1))
    e = access_edit(SimpleNamespace(kernel=None), pos, "st", ("release", "cta"), ("release", "gpu"), "PTX")
    assert e.line == 2
    assert "`cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[0]);`" in e.text
    assert "line 3" in e.text


def test_a_legacy_atomic_made_ordered_names_atomic_ref_or_a_fence(tmp_path):
    prog, pos = _at(tmp_path, "atomicExch(lock, 0);")
    e = access_edit(prog, pos, "atom", ("relaxed", "gpu"), ("release", "gpu"), "PTX")
    assert ".exchange(..., cuda::memory_order_release)" in e.text
    assert "`__threadfence()` just before it" in e.text


@pytest.mark.parametrize("sem, scope, want", [
    ("sc", "gpu", "__threadfence();"), ("sc", "cta", "__threadfence_block();"),
    ("sc", "sys", "__threadfence_system();"),
    ("release", "gpu", "cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device);"),
    ("acquire", "cta", "cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_block);"),
    ("acq_rel", "cluster", 'asm volatile("fence.acq_rel.cluster;" ::: "memory");'),
])
def test_a_fence_is_said_as_cuda_writes_it(sem, scope, want):
    assert fence_code(sem, scope) == want


def test_an_inserted_fence_goes_before_the_cuda_line_of_the_next_access(tmp_path):
    prog, pos = _at(tmp_path, "f.store(1, cuda::std::memory_order_relaxed);")
    e = fence_insert(prog, pos, "release", "gpu", "b0t0")
    assert e.line == 3
    assert e.text.startswith("insert `cuda::atomic_thread_fence(cuda::memory_order_release, "
                             "cuda::thread_scope_device);` (or `__threadfence()`) in b0t0 before line 3")


def test_an_existing_fence_is_widened_in_its_own_words(tmp_path):
    prog, pos = _at(tmp_path, "__threadfence_block();")
    assert "`__threadfence_block();` → `__threadfence();`" in fence_edit(
        prog, pos, ("sc", "cta"), ("sc", "gpu"), "PTX").text
    prog, pos = _at(tmp_path, "cuda::atomic_thread_fence(cuda::memory_order_release, "
                              "cuda::thread_scope_block);")
    e = fence_edit(prog, pos, ("release", "cta"), ("acq_rel", "gpu"), "PTX")
    assert "→ `cuda::atomic_thread_fence(cuda::memory_order_acq_rel, cuda::thread_scope_device);`" in e.text


def test_without_a_cuda_line_there_is_no_cuda_edit():
    pos = SimpleNamespace(src=None)
    assert access_edit(SimpleNamespace(kernel=None), pos, "st", ("relaxed", "gpu"), ("release", "gpu"),
                       "PTX") is None


def test_a_litmus_fix_keeps_its_ptx_words_and_equal_fixes_are_said_once():
    prog = ptxmm.load(ROOT / "examples/mp-relaxed-acquire.ptx")
    singles = single_changes(prog)
    assert all(cuda_edit(prog, c) is None for c in singles)
    fence = next(c for c in singles if c.kind == "fence" and c.sem == "release")
    twin = Change(fence.kind, fence.thread, fence.index, fence.sem, fence.scope, fence.cost, fence.text)
    rep = FixReport((Solution((fence,), 3), Solution((twin,), 3)), len(singles), 2, 400, False, 1, 0.1)
    lines = fix_lines(prog, rep)
    assert lines[0].startswith("fix: 1 minimal fix(es)")
    assert sum(fence.text in ln for ln in lines) == 1


@pytest.mark.parametrize("cu", BROKEN, ids=lambda p: p.stem)
def test_every_fix_candidate_of_a_broken_kernel_is_an_edit_at_a_cuda_line(cu):
    """The done-when of issue 42's item 5, for the words: whatever change the fix search may
    propose for a broken kernel of examples/kernels(/real) is said at a line of its .cu file."""
    prog = ptxmm.load(cu.with_suffix(".ptx"))
    singles = single_changes(prog)
    assert singles
    n = len(cu.read_text().splitlines())
    for c in singles:
        e = cuda_edit(prog, c)
        assert e is not None, c.text
        assert Path(e.file).name == cu.name and 0 < e.line <= n, (c.text, str(e))
        assert e.text and "%r" not in e.text.split("(PTX:")[0], str(e)


def test_explain_fix_on_a_cu_names_the_cuda_edit_first():
    out = subprocess.run([sys.executable, "-m", "ptxmm", "explain", "--fix",
                          str(ROOT / "examples/kernels/mp-relaxed-flag.cu")],
                         capture_output=True, text=True, check=False, cwd=ROOT).stdout
    first = re.search(r"\n  1\. (.*)\n\s+PTX: (.*)", out)
    assert first, out
    assert first.group(1).startswith("mp-relaxed-flag.cu:31: `f.store(1, cuda::std::memory_order_relaxed);`"
                                     " → `f.store(1, cuda::std::memory_order_release);`")
    assert "st.release.gpu" in first.group(2)
    numbered = re.findall(r"\n  \d+\. (.*?)   \(cost", out)
    assert len(numbered) == len(set(numbered))


def test_a_wrong_launch_names_the_kernel_and_its_parameters_as_the_source_does(tmp_path):
    src = (ROOT / "examples/kernels/histogram.cu").read_text()
    bad = re.sub(r"(ptxmm: launch histogram<<<[^>]*>>>\(.*)\)", r"\1, 5)", src, count=1)
    f = tmp_path / "histogram.cu"
    f.write_text(bad)
    with pytest.raises(SemanticError) as e:
        ptxmm.load(f)
    text = str(e.value) + (e.value.hint or "")
    assert "_param_" not in text and "_Z9" not in text
    assert "histogram(const int *, unsigned int *)" in text


def test_parameters_are_labelled_by_position_and_c_type():
    assert c_type("PKi") == "const int *"
    assert param_label("_Z9histogramPKiPj", 1, 2) == "parameter 2 (unsigned int *)"
    assert param_label("_Z9histogramPKiPj", 1, 3) == "parameter 2"
    assert signature("_Z9histogramPKiPj", ["u64", "u64"]) == "histogram(const int *, unsigned int *)"
    assert signature("kern", ["u64"]) == "kern(.u64)"


def test_explain_json_gives_each_change_its_cuda_edit():
    from ptxmm.explanation.advice import fixes_json

    prog = ptxmm.load(ROOT / "examples/kernels/mp-relaxed-flag.ptx")
    rel = next(c for c in single_changes(prog) if c.kind == "sem" and c.sem == "release"
               and "st.relaxed" in c.text)
    rep = FixReport((Solution((rel,), 1),), 1, 1, 400, False, 1, 0.1)
    (change,) = fixes_json(prog, rep)["solutions"][0]["changes"]
    assert change["cuda"] == {"file": change["cuda"]["file"], "line": 31,
                              "edit": "`f.store(1, cuda::std::memory_order_relaxed);` → "
                                      "`f.store(1, cuda::std::memory_order_release);`"}
    assert Path(change["cuda"]["file"]).name == "mp-relaxed-flag.cu"
    assert change["text"] == rel.text  # the PTX edit kept
    lit = ptxmm.load(ROOT / "examples/mp-relaxed-acquire.ptx")
    c = single_changes(lit)[0]
    lrep = FixReport((Solution((c,), 1),), 1, 1, 400, False, 1, 0.1)
    (lc,) = fixes_json(lit, lrep)["solutions"][0]["changes"]
    assert lc["cuda"] is None

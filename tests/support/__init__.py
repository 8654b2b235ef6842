"""Helpers shared by the test folders (importable from any of them: pyproject.toml puts tests/ on
pytest's ``pythonpath``): the repository root, the bundled examples, the GPU marks, the tools/
scripts as modules, and the Z3 = brute force comparison. The generators of random programs
(grammar_gen, hunt3_gen, liveness_gen, module_gen), the ptxas oracle, the kernel corpora's shared
checks (kernel_corpus) and the litmus programs several folders use (programs) are modules of this
package.

Nothing here reads outside the repository: the Dat3M corpus beside it (../shared/conformance) is
reached only through the ``conformance`` fixtures of tests/conftest.py, which skip, saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# store buffering in Dat3M's .litmus syntax, as a user pastes it (the web tests)
DAT3M_SB = """PTX SB
{
x=0; y=0;
P0:r0=0; P1:r1=0;
}
 P0@cta 0,gpu 0          | P1@cta 1,gpu 0          ;
 st.weak x, 1            | st.weak y, 1            ;
 ld.weak r0, y           | ld.weak r1, x           ;
exists (P0:r0 == 0 /\\ P1:r1 == 0)
"""


def tool_module(name: str):
    """A script of tools/ imported as a module (the doc generators the staleness tests run)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def gpu_test_marks() -> list:
    """pytestmark for a module of GPU tests: skipped (visibly) without CuPy or without a device."""
    cp = pytest.importorskip("cupy")
    try:
        have = cp.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no driver, no device: CuPy raises its own runtime errors
        have = False
    return [pytest.mark.gpu, pytest.mark.skipif(not have, reason="no CUDA device")]


def ptx_files() -> list[Path]:
    """Every bundled .ptx litmus test (tests/litmus/, examples/), not nvcc's kernel modules."""
    kernels = ROOT / "examples" / "kernels"  # nvcc's PTX modules: kernels, tested by tests/kernel/
    modules = (kernels, kernels / "real",  # tests/kernel/test_real_corpus.py
               ROOT / "examples" / "hopper" / "kernels")  # and by tests/semantics/hopper/
    return sorted([*(ROOT / "tests" / "litmus").rglob("*.ptx"),
                   *(p for p in (ROOT / "examples").rglob("*.ptx") if p.parent not in modules)])


def outcome_values(r) -> set:
    """A result's outcomes as a set of value tuples."""
    return {o.values for o in r.outcome_set}


def agree(prog, model: str = "ptx", **kw):
    """Z3 = brute force: both engines give the same outcome set and verdict; the Z3 result.
    Keyword arguments go to both checks (``flags=False`` unless given)."""
    import ptxmm

    kw.setdefault("flags", False)
    z = ptxmm.check(prog, model, engine="z3", **kw)
    b = ptxmm.check(prog, model, engine="brute", **kw)
    assert z.outcome_set == b.outcome_set, (z.outcome_set, b.outcome_set)
    assert z.holds == b.holds
    return z


def verdict(src: str, both: bool = True) -> bool:
    """The verdict of the .ptx text ``src`` (both engines, equal outcome sets; ``both=False``: one
    engine, for the programs whose brute-force search takes seconds)."""
    import ptxmm

    prog = ptxmm.parse(src, "t.ptx")
    return (agree(prog) if both else ptxmm.check(prog, flags=False)).holds


def params(values, ids, slow=()) -> list:
    """``pytest.param`` per value for ``parametrize``: those whose id is in ``slow`` are marked slow
    (a sweep's long cases run with -m slow, the rest by default)."""
    return [pytest.param(v, id=i, marks=[pytest.mark.slow] if i in slow else []) for v, i in zip(values, ids)]

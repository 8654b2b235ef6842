"""What the two kernel corpora's tests share (tests/kernel/test_kernel_corpus.py for examples/kernels,
test_real_corpus.py for examples/kernels/real): a kernel's `// ptxmm:` lines, its expected finding
kinds, its launch's thread count, the findings of a check, nvcc's flags and the normalisation under
which a recompile must equal the committed PTX."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import ptxmm
from ptxmm import FindingKind

KINDS = {"race", "assert-fails", "hang", "out-of-bounds"}
NVCC_FLAGS = ["-ptx", "-lineinfo", "-arch=sm_90", "-O3"]


def directives(cu: Path) -> dict[str, str]:
    """The `// ptxmm: KEY VALUE` lines of a kernel (each key once)."""
    out: dict[str, str] = {}
    for line in cu.read_text().splitlines():
        m = re.match(r"\s*//\s*ptxmm:\s*(\w+)\s+(.*?)\s*$", line)
        if m:
            assert m.group(1) not in out, f"{cu.name}: two `ptxmm: {m.group(1)}` lines"
            out[m.group(1)] = m.group(2)
    return out


def expected(cu: Path) -> set[str]:
    """The finding kinds the `expect` line names (none for `ok`)."""
    text = directives(cu)["expect"]
    return set() if text == "ok" else {k.strip() for k in text.split(",")}


def threads(launch: str) -> int:
    """Threads of one GPU's launch (grid × block; `cooperative`, `nonportable` may come first)."""
    m = re.match(r"(?:(?:cooperative|nonportable)\s+)*\w+<<<\s*(\([^)]*\)|\d+)\s*,\s*(\([^)]*\)|\d+)",
                 launch)
    assert m, launch

    def count(d: str) -> int:
        n = 1
        for x in re.findall(r"\d+", d):
            n *= int(x)
        return n
    return count(m.group(1)) * count(m.group(2))


@functools.cache
def check(path: str, model: str):
    """One query for the condition (findings are looked for all the same): no outcome enumeration."""
    return ptxmm.check(ptxmm.load(path), model=model, observe="condition")


def kinds(res) -> set[str]:
    return {str(f.kind) for f in res.findings if f.kind != FindingKind.FLAG}


def normalised(ptx: str, name: str) -> str:
    """nvcc's PTX without what depends on the machine: the version header, the -lineinfo
    .debug_str section, the absolute path of `.file 1`, and the hash of internal-linkage names
    (libcu++'s CPO objects carry one of the path)."""
    ptx = re.sub(r"\A(//[^\n]*\n)+", "", ptx)
    ptx = re.sub(r"\.section\s+\.debug_str\s*\{.*?\n\s*\}", ".section .debug_str {}", ptx, flags=re.S)
    ptx = re.sub(r"(_INTERNAL_|_GLOBAL__N__)[0-9a-f]{8}_", r"\1", ptx)
    return re.sub(rf'^(\t\.file\t1 )".*/{re.escape(name)}\.cu"', rf'\1"{name}.cu"', ptx, flags=re.M)


def entry_body(ptx: Path) -> str:
    """The kernel's body in nvcc's PTX (from `.entry` to the `.file` lines)."""
    text = ptx.read_text()
    return text[text.index(".entry"):text.index(".file")]


def assert_keeps(ptx: Path, keeps: list[str], counts: list[tuple[str, int]]) -> None:
    """nvcc kept what the source means: each pattern of ``keeps`` is in the body, each of
    ``counts`` exactly that many times (a broken twin differs from its kernel there)."""
    body = entry_body(ptx)
    for pat in keeps:
        assert re.search(pat, body), pat
    for pat, n in counts:
        assert len(re.findall(pat, body)) == n, pat


def assert_recompiles(kdir: Path, name: str, tmp_path: Path) -> None:
    """nvcc (NVCC_FLAGS, run in a copy of the kernel's directory) makes the committed PTX again,
    up to :func:`normalised`."""
    import shutil
    import subprocess

    shutil.copy(kdir / f"{name}.cu", tmp_path)
    r = subprocess.run(["nvcc", *NVCC_FLAGS, f"{name}.cu", "-o", f"{name}.ptx"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    fresh = normalised((tmp_path / f"{name}.ptx").read_text(), name)
    assert fresh == normalised((kdir / f"{name}.ptx").read_text(), name)


# Where a model departs from the current ISA text a real kernel's `expect` line argues from, that
# model's findings (models/ptx-v7.5.cat: Dat3M's 7.5 formalisation makes fence.sc no acquire fence, so
# CUB's relaxed status load + __threadfence() is no acquire pattern there, and its value loads race).
# tests/kernel/test_real_corpus.py and tools/real_corpus_status.py both judge by it.
DEPARTURES: dict[tuple[str, str], set[str]] = {
    ("cub-tile-state-unpacked", "ptx-v7.5"): {"race", "assert-fails"},
}

"""Refresh the status column of examples/kernels/real/README.md from what ptxmm says now.

For every kernel of the real-library corpus: one in-process check of its committed PTX under
``ptx`` and ``ptx-v7.5`` (the condition asked with one query, as tests/kernel/test_real_corpus.py
asks it), and the cell "agrees (T s ptx / T s ptx-v7.5)", "refused: <message>" or
"DISAGREES: found {...}, expected {...}"; then the README's count sentence. Run from the repository
root: ``python tools/real_corpus_status.py`` (``--check`` only prints, writing nothing)."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import ptxmm
from ptxmm import FindingKind
from ptxmm.errors import PtxmmError, UnsupportedError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.kernel_corpus import DEPARTURES  # noqa: E402  (the tests' own list)
from support.kernel_corpus import expected as _expected  # noqa: E402

KDIR = Path("examples/kernels/real")
MODELS = ("ptx", "ptx-v7.5")


def status(name: str) -> str:
    times = []
    for model in MODELS:
        t0 = time.perf_counter()
        try:
            res = ptxmm.check(ptxmm.load(str(KDIR / f"{name}.ptx")), model=model, observe="condition")
        except UnsupportedError as e:
            return "refused: " + str(e).split(": not supported yet: ")[-1].split("\n")[0].replace("|", "\\|")
        except PtxmmError as e:
            return "ERROR: " + str(e).split("\n")[0].replace("|", "\\|")
        times.append(time.perf_counter() - t0)
        found = {str(f.kind) for f in res.findings if f.kind != FindingKind.FLAG}
        want = DEPARTURES.get((name, model), _expected(KDIR / f"{name}.cu"))
        if found != want or res.holds is not ((name, model) not in DEPARTURES):
            return (f"DISAGREES under {model}: found {sorted(found)}, condition holds: {res.holds}, "
                    f"status {res.status}")
    return "agrees (" + " / ".join(f"{t:.2f} s {m}" for t, m in zip(times, MODELS, strict=True)) + ")"


def main(argv: list[str]) -> int:
    readme = KDIR / "README.md"
    lines = readme.read_text().splitlines()
    agree = refused = other = 0
    for i, line in enumerate(lines):
        m = re.match(r"\|\s*\[([\w.-]+)\]\(\1\.cu\)\s*\|", line)
        if not m:
            continue
        st = status(m.group(1))
        print(f"{m.group(1)}: {st}")
        agree += st.startswith("agrees")
        refused += st.startswith("refused")
        other += not st.startswith(("agrees", "refused"))
        cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
        cells[-1] = f" {st} "
        lines[i] = "|" + "|".join(cells) + "|"
    n = agree + refused + other
    text = "\n".join(lines) + "\n"
    verb = "is" if refused == 1 else "are"
    count = (f"{agree} of the {n} agree with their argued verdict under both models, {refused} {verb} "
             "refused" + (f", {other} do not agree" if other else "") + ".")
    text = re.sub(r"\d+ of the \d+ agree with their argued verdict under both models, "
                  r"\d+ (?:are|is) refused(, \d+ do not agree)?\.", count, text, count=1)
    print(f"{agree} agree, {refused} refused, {other} other")
    if "--check" not in argv:
        readme.write_text(text)
    return 1 if other else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

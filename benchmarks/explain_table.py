"""The table of benchmarks/results/s16-explain.md from the logs of the two timing scripts: every
bundled example's ``explain`` and ``graph`` (``bench_explain.py --compare --no-fix``: CPU seconds,
wall in brackets) and what the playground asks for it (``bench_page.py``: ``/api/check`` and then
``/api/graph``, CPU seconds). A row over ``--over`` CPU seconds (default 6) in any column is marked.

    python benchmarks/explain_table.py EXPLAIN_LOG PAGE_LOG [PAGE_LOG...] [--over 6] > table.md

A later PAGE_LOG's row replaces an earlier one's (a re-run with a longer limit, say)."""

from __future__ import annotations

import re
import sys

_ROW = re.compile(r"^(\S+\.(?:ptx|litmus|cu))\s+(.*)$")


def _explain_rows(path: str) -> dict[str, tuple[float, float, float, float]]:
    """file → (explain wall, explain cpu, graph wall, graph cpu) of the run (the "a" columns)."""
    out = {}
    for line in open(path):
        m = _ROW.match(line.rstrip("\n"))
        if not m:
            continue
        cells = m.group(2).split()
        # compile, then per command: wall b, wall a, cpu b, cpu a
        try:
            nums = [float(c) for c in cells[:9]]
        except ValueError:
            continue
        out[m.group(1)] = (nums[2], nums[4], nums[6], nums[8])
    return out


def _page_rows(path: str) -> dict[str, tuple[float, float, float, float, str]]:
    """example → (check wall, check cpu, graph wall, graph cpu, status words)."""
    out = {}
    for line in open(path):
        m = _ROW.match(line.rstrip("\n"))
        if not m:
            continue
        cells = m.group(2).split(None, 5)
        if len(cells) < 6:
            continue
        out[m.group(1)] = (float(cells[0]), float(cells[1]), float(cells[2]), float(cells[3]),
                           cells[5].replace("  SLOW", "").strip())
    return out


def main() -> int:
    over = float(sys.argv[sys.argv.index("--over") + 1]) if "--over" in sys.argv else 6.0
    logs = [a for i, a in enumerate(sys.argv[1:], 1) if a != "--over" and sys.argv[i - 1] != "--over"]
    ex = _explain_rows(logs[0])
    page: dict = {}
    for log in logs[1:]:
        page |= _page_rows(log)
    names = sorted(set(ex) | set(page))
    print("| example | explain CPU s (wall) | graph CPU s (wall) | page: check CPU s | page: graph CPU s "
          "| page: what the check said |")
    print("|---|---|---|---|---|---|")
    for n in names:
        e = ex.get(n)
        p = page.get(n)
        cells = [f"{e[1]:.2f} ({e[0]:.1f})", f"{e[3]:.2f} ({e[2]:.1f})"] if e else ["—", "—"]
        cells += [f"{p[1]:.2f}", f"{p[3]:.2f}" if p[3] else "—", p[4]] if p else ["—", "—", "—"]
        slow = (e and max(e[1], e[3]) > over) or (p and max(p[1], p[3]) > over)
        print(f"| {n}{' **>' + format(over, 'g') + ' s**' if slow else ''} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

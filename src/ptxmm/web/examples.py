"""The bundled examples as the playground offers them: listed once, read only by a name from the
listing (a request never names a path that is joined to a directory).

The tutorial's steps are ``examples/teaching/NN-*.ptx``, in order; each file's leading comment
(``// Step N — ...``) is the step's text, as docs/tutorial.md tells it."""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path

from .._infra.resources import data_dir
from .formats import format_of

GROUPS = (("teaching", "Tutorial steps"), ("", "Examples"), ("classic", "Classic shapes"),
          ("proxy", "Proxies"), ("hopper", "Hopper synchronization"), ("kernels", "Kernels (CUDA)"),
          ("device", "Device"))
_TEST = re.compile(r'^\s*\.test\s+(\S+)(?:\s+"([^"]*)")?', re.M)
_LITMUS = re.compile(r"^\s*PTX\s+(\S+)", re.M)
_LAUNCH = re.compile(r"^\s*//\s*ptxmm:\s*launch\s+(\S.*?)\s*$", re.M)  # a kernel's description


class Library:
    def __init__(self, root: Path | None = None):
        self.root = root

    @cached_property
    def files(self) -> dict[str, Path]:
        """Every example, by its path under examples/ (posix); of a kernel's ``.cu`` and its ``.ptx``
        twin (nvcc's output, which carries no launch of its own) the ``.cu``."""
        try:
            root = self.root or data_dir("examples")
        except FileNotFoundError:
            return {}
        return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*"))
                if p.suffix in (".ptx", ".litmus", ".cu") and p.is_file()
                and not (p.suffix == ".ptx" and p.with_suffix(".cu").is_file())}

    def listing(self) -> list[dict]:
        """Each example: path, group (and its title), name, description, the leading comment, format;
        the tutorial's steps first, in order (read once)."""
        return self._listing

    @cached_property
    def _listing(self) -> list[dict]:
        order = {g: i for i, (g, _) in enumerate(GROUPS)}
        titles = dict(GROUPS)
        out = []
        for path, p in self.files.items():
            group = path.rsplit("/", 1)[0] if "/" in path else ""
            text = p.read_text(errors="replace")
            m = _TEST.search(text) or _LITMUS.search(text)
            launch = _LAUNCH.search(text) if p.suffix == ".cu" else None
            out.append({"path": path, "group": group, "group_title": titles.get(group, group),
                        "name": m.group(1) if m else p.stem,
                        "description": (m.group(2) or "") if m and m.re is _TEST else
                        (launch.group(1) if launch else ""),
                        "comment": _leading_comment(text), "format": format_of(path, text)})
        out.sort(key=lambda e: (order.get(e["group"], len(order)), e["group"], e["path"]))
        return out

    def source(self, path: str) -> str | None:
        p = self.files.get(path)
        return None if p is None else p.read_text(errors="replace")

    def format(self, path: str) -> str:
        return format_of(path, self.source(path) or "")


def _leading_comment(text: str) -> str:
    lines = []
    for ln in text.splitlines():
        s = ln.strip()
        if not s.startswith("//"):
            break
        lines.append(s[2:].strip())
    return " ".join(lines)

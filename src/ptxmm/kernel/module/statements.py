"""Module text → statements: a hand-written splitter (a module is a flat sequence of
``;``-terminated statements, labels, scopes ``{ }`` and a few line directives); a brace opens a
scope only at the start of a statement or after a function header. Every statement keeps its PTX
position and the CUDA position of the ``.loc`` in force, and the ``// ptxmm:`` lines are kept."""

from __future__ import annotations

import re

from ..._infra.records import record
from ...errors import SourcePos
from .records import KernelPos

# ----- statements --------------------------------------------------------------------------------

@record(frozen=False)
class _Stmt:
    kind: str  # "stmt" "label" "open" "close"
    text: str
    line: int
    col: int
    src: SourcePos | None


_DIRECTIVE = re.compile(r"//\s*ptxmm:\s*(.*)$")
_LABEL = re.compile(r"^[A-Za-z_$%][\w$]*$")
_HEADER = re.compile(r"^(\.(visible|extern|weak|entry|func)\b)")


class _Splitter:
    """Text → statements; `.loc`/`.file` tracked, `.section` (debug information) skipped."""

    def __init__(self, text: str, file: str):
        self.text, self.file = text, file
        self.files: dict[int, str] = {}
        self.loc: tuple[int, int] | None = None  # (file number, line) in the kernel's own file
        self.main: int | None = None
        self.directives: list[tuple[str, SourcePos]] = []
        self.out: list[_Stmt] = []

    def directives_only(self) -> list[tuple[str, SourcePos]]:
        """The ``// ptxmm:`` lines of a source file (a .cu)."""
        out = []
        for ln, line in enumerate(self.text.splitlines(), 1):
            m = _DIRECTIVE.search(line)
            if m and line.lstrip().startswith("//"):
                out.append((m.group(1).strip(), SourcePos(self.file, ln, line.find("ptxmm") + 1)))
        return out

    def run(self) -> list[_Stmt]:
        self.buf: list[str] = []
        self.start: tuple[int, int] | None = None
        self.in_section, self.depth = False, 0  # a .section being skipped; its open braces
        in_comment = False
        for ln, raw in enumerate(self.text.splitlines(), 1):
            line = raw
            if in_comment:
                end = line.find("*/")
                if end < 0:
                    continue
                line, in_comment = " " * (end + 2) + line[end + 2:], False
            m = _DIRECTIVE.search(line)
            if m and line.lstrip().startswith("//"):
                self.directives.append((m.group(1).strip(),
                                        SourcePos(self.file, ln, line.find("ptxmm") + 1)))
            line, in_comment = _strip_comments(line)
            if not self.directive_line(line.strip(), line, ln):
                self.characters(line, ln)
        if "".join(self.buf).strip():
            self.emit("stmt", "".join(self.buf), self.start)
        return self.out

    def directive_line(self, s: str, line: str, ln: int) -> bool:
        """A line that is not split into statements: debug sections (skipped), .loc, .file, and
        the module directives written without a `;`."""
        if self.in_section:
            self.depth += s.count("{") - s.count("}")
            self.in_section = not (self.depth <= 0 and "}" in s)
            return True
        if s.startswith(".section"):
            self.depth = s.count("{") - s.count("}")
            self.in_section = not ("{" in s and self.depth <= 0)
            return True
        if re.match(r"\.loc\s", s):  # not `.local` (a variable declaration)
            self.dot_loc(s, ln)
            return True
        if s.startswith(".file"):
            self.dot_file(s)
            return True
        if s.startswith((".version", ".target", ".address_size")) and not "".join(self.buf).strip():
            self.emit("stmt", s.rstrip(";"), (ln, line.find(s[0]) + 1))
            return True
        return False

    def characters(self, line: str, ln: int) -> None:
        for i, ch in enumerate(line):
            if self.start is None and not ch.isspace():
                self.start = (ln, i + 1)
            text = "".join(self.buf)
            if ch == ";":
                self.flush("stmt")
            elif ch == "{" and self.opens_scope(text):
                if text.strip():
                    self.flush("stmt")
                self.out.append(_Stmt("open", "{", ln, i + 1, None))
                self.buf, self.start = [], None
            elif ch == "}" and not text.strip():
                self.out.append(_Stmt("close", "}", ln, i + 1, None))
                self.buf, self.start = [], None
            elif ch == ":" and _LABEL.match(text.strip() or "-") and line[i + 1:i + 2] != ":" \
                    and line[i - 1:i] != ":":
                self.flush("label")
            else:
                self.buf.append(ch)
        self.buf.append(" ")

    def flush(self, kind: str) -> None:
        self.emit(kind, "".join(self.buf), self.start)
        self.buf, self.start = [], None

    @staticmethod
    def opens_scope(buf: str) -> bool:
        s = buf.strip()
        return not s or bool(_HEADER.match(s)) and "=" not in s

    def emit(self, kind: str, text: str, start) -> None:
        text = " ".join(text.split())
        if not text:
            return
        line, col = start if start else (0, 0)
        src = None
        if self.loc is not None and self.loc[0] in self.files:
            src = SourcePos(self.files[self.loc[0]], self.loc[1], 1)
        self.out.append(_Stmt(kind, text, line, col, src))

    def dot_loc(self, s: str, ln: int) -> None:
        """``.loc F L C{, function_name X, inlined_at F2 L2 C2}``: the line in the kernel's file
        (the file of the first ``.loc`` not inlined) stays the CUDA position."""
        m = re.match(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)$", s)
        if not m:
            return
        f, line = int(m.group(1)), int(m.group(2))
        inl = re.search(r"inlined_at\s+(\d+)\s+(\d+)", m.group(4))
        if inl is None:
            if self.main is None:
                self.main = f
            if f == self.main:
                self.loc = (f, line)
        elif int(inl.group(1)) == self.main:
            self.loc = (self.main, int(inl.group(2)))

    def dot_file(self, s: str) -> None:
        m = re.match(r'\.file\s+(\d+)\s+"([^"]*)"', s)
        if m:
            self.files[int(m.group(1))] = m.group(2)


def _strip_comments(line: str) -> tuple[str, bool]:
    """The line without ``//`` and ``/* */`` comments (outside strings); whether a block comment
    stays open at its end."""
    out, i, in_str = [], 0, False
    while i < len(line):
        two = line[i:i + 2]
        if line[i] == '"':
            in_str = not in_str
        if not in_str and two == "//":
            break
        if not in_str and two == "/*":
            end = line.find("*/", i + 2)
            if end < 0:
                return "".join(out), True
            out.append(" " * (end + 2 - i))
            i = end + 2
            continue
        out.append(line[i])
        i += 1
    return "".join(out), False

def _pos(file: str, st: _Stmt, col_off: int = 0) -> KernelPos:
    return KernelPos(file, st.line, st.col + col_off, st.src)

def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[:n - 3] + "..."

"""The command blocks of README.md and docs/*.md are promises, held here (issue 42, item 7):

* a transcript — a block whose first line is ``$ ptxmm ...`` — is run (from the repository root)
  and its shown output must appear in the real output: the shown lines in order, a line ``...``
  standing for lines left out, a line ending in ``...`` for the rest of that line; timings and
  runs of spaces are normalised;
* every other ``ptxmm ...`` line of a shell block is parsed by the CLI itself (the command, its
  options and their values, as ``ptxmm`` would take them, nothing run): a renamed or misspelt
  option is a failure. A usage synopsis (``PATHS``, ``[--resume]``, ``M1|M2``) is parsed with its
  placeholders, and its optional parts left out;
* docs/tutorial.md, docs/explain.md and docs/errors.md are generated from real runs by tools/ and
  held by their own tests (test_tutorial_doc.py, test_explain_doc.py, test_errors_doc.py); here
  their ``ptxmm`` lines are parsed like the others.

Prose promises with a number in them are held to the number (the bundled tests with an
expectation)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import click
import pytest
from support import ROOT

from ptxmm.cli.main import main

DOCS = [Path(ROOT) / "README.md", *sorted((Path(ROOT) / "docs").glob("*.md"))]
GENERATED = {"tutorial.md", "explain.md", "errors.md"}  # compared with their generators elsewhere


def _blocks(path: Path) -> list[tuple[int, str, list[str]]]:
    """The fenced blocks of a Markdown file: (line of the fence, info string, lines)."""
    out, cur, info, start = [], None, "", 0
    for no, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("```"):
            if cur is None:
                cur, info, start = [], line[3:].strip(), no
            else:
                out.append((start, info, cur))
                cur = None
        elif cur is not None:
            cur.append(line)
    return out


def _transcripts() -> list[tuple[str, list[str]]]:
    out = []
    for doc in DOCS:
        if doc.name in GENERATED:
            continue
        for start, _, lines in _blocks(doc):
            if lines and lines[0].startswith("$ ptxmm "):
                out.append((f"{doc.name}:{start}", lines))
    return out


def _command_lines() -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        for start, info, lines in _blocks(doc):
            if info not in ("", "sh", "console", "bash", "shell"):
                continue
            for k, line in enumerate(lines):
                text = line[2:] if line.startswith("$ ") else line
                if text.startswith("ptxmm "):
                    out.append((f"{doc.name}:{start + k + 1}", text))
    return out


_TIME = re.compile(r"\b\d+(?:\.\d+)?\s*(?:ms|s)\b")


def _norm(line: str) -> str:
    return re.sub(r"\s+", " ", _TIME.sub("T", line)).strip()


def _shown_in(shown: list[str], real: list[str]) -> str | None:
    """None when the shown lines appear in the real ones, in order (``...`` skips lines, a line
    ending in ``...`` is a prefix); else the first shown line not found."""
    got = [_norm(x) for x in real]
    i = 0
    gap = True  # before the first shown line, any real lines may come
    for s in shown:
        if s.strip() == "...":
            gap = True
            continue
        want = _norm(s)
        prefix = want.endswith("...")
        want = want.removesuffix("...").rstrip()

        def hit(j: int, want: str = want, prefix: bool = prefix) -> bool:
            return got[j].startswith(want) if prefix else got[j] == want
        j = next((j for j in range(i, len(got)) if hit(j)), None) if gap else (i if i < len(got) and hit(i)
                                                                                else None)
        if j is None:
            return s
        i, gap = j + 1, False
    return None


@pytest.mark.parametrize("where, lines", _transcripts(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_transcript_shows_what_the_command_prints(where, lines):
    args = shlex.split(lines[0][2:])[1:]
    proc = subprocess.run([sys.executable, "-m", "ptxmm", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env=_env())
    real = (proc.stdout + proc.stderr).splitlines()
    missing = _shown_in(lines[1:], real)
    assert missing is None, f"{where}: `{missing}` is not in the output of `{lines[0][2:]}`:\n" + \
        "\n".join(real)


def _env() -> dict:
    import os

    return {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}


_PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_.]*(\|[A-Z0-9_.-]+)*$")


def _synopsis_args(text: str) -> list[list[str]]:
    """The arguments of each ``ptxmm`` command of a line (``a && b``; a pipe's first part): a
    comment dropped, optional ``[...]`` parts left out, a choice ``A|B`` its first, ``...``
    dropped."""
    text = re.sub(r"\s+#.*$", "", text)
    text = re.sub(r"\[[^\[\]]*\]", "", text)
    out = []
    for part in text.split(" && "):
        words = shlex.split(part.split(" | ")[0])
        if words[:1] != ["ptxmm"]:
            continue
        out.append([a.split("|")[0] if "|" in a and not a.startswith("-") else a for a in words[1:]
                    if a != "..."])
    return out


def _parse(args: list[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx = main.make_context("ptxmm", list(args))
        name, cmd, rest = main.resolve_command(ctx, ctx.protected_args + ctx.args)
    if isinstance(cmd, click.Group):
        sub = cmd.make_context(name, rest, parent=ctx)
        sname, scmd, srest = cmd.resolve_command(sub, sub.protected_args + sub.args)
        scmd.make_context(sname, srest, parent=sub)
        return
    cmd.make_context(name, rest, parent=ctx)


def _id(x: str) -> str:
    return x if ":" in x and " " not in x else ""


@pytest.mark.parametrize("where, text", _command_lines(), ids=_id)
def test_a_documented_command_line_is_one_the_cli_takes(where, text):
    for args in _synopsis_args(text):
        try:
            _parse(args)
        except click.ClickException as e:
            pytest.fail(f"{where}: `{text}`: {e.format_message()}")


def test_the_number_of_bundled_tests_with_an_expectation_is_the_one_the_docs_say():
    from ptxmm.syntax.expect import expectations

    def collected(p: Path) -> bool:  # the pytest plugin's rule (pytest_collect_file)
        words, line = expectations(p.read_text(errors="replace"))
        return bool(words) or (line and p.suffix != ".cu")

    real = Path(ROOT) / "examples" / "kernels" / "real"  # `--ignore`d by the plugin's own test
    n = sum(1 for p in (Path(ROOT) / "examples").rglob("*") if p.suffix in (".ptx", ".litmus", ".cu")
            and p.parent != real and collected(p))
    said = [(doc.name, int(m.group(1))) for doc in DOCS
            for m in re.finditer(r"the (\d+) bundled tests that have an expectation", doc.read_text())]
    assert said and all(k == n for _, k in said), (n, said)

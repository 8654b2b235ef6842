"""A fix in the kernel author's own words (issue 42, "advice in CUDA terms"): a change of a PTX
instruction that ``explain --fix`` proposes, said as the edit of the CUDA line it came from
(nvcc ``-lineinfo``'s ``.loc``, :class:`ptxmm.kernel.module.records.KernelPos.src`).

What each PTX change is in CUDA (CUDA C++ Programming Guide, "Memory fence functions" and
"Atomic functions"; libcu++ ``cuda::atomic_ref``, ``cuda::atomic_thread_fence``; PTX ISA 9.7.13.4
``membar``/``fence``: ``membar.{cta,gl,sys}`` has the semantics of ``fence.sc`` at scope cta, gpu,
sys):

* a memory order (``cuda::std::memory_order_relaxed`` → ``..._release``) on the line: the token
  replaced; a scope (``cuda::thread_scope_block`` → ``cuda::thread_scope_device``) on the line or,
  for an atomic declared earlier (``cuda::atomic_ref<int, cuda::thread_scope_block> f(...)``), on
  the nearest earlier line that names it;
* a legacy atomic function: ``atomicAdd_block`` → ``atomicAdd`` → ``atomicAdd_system`` for scope;
  for ordering (they are relaxed) the ``cuda::atomic_ref`` member with a memory order, or a fence;
* a plain or ``volatile`` access made strong: through ``cuda::atomic_ref<T, scope>``;
* a fence inserted: ``cuda::atomic_thread_fence(order, scope)`` (nvcc: ``fence.acq_rel``) or, for
  ``fence.sc``, ``__threadfence()``/``__threadfence_block()``/``__threadfence_system()``;
  a fence made stronger or wider: ``__threadfence_block()`` → ``__threadfence()``, the order and
  scope tokens of ``cuda::atomic_thread_fence``;
* inline ``asm``: its PTX qualifiers replaced in the string.

A line whose text matches none of these still gets an edit at that CUDA line, in words ("make
the store a release"); an instruction without a CUDA line gets none (the caller keeps the PTX
edit). Nothing here decides *which* change is a fix: that is :mod:`ptxmm.explanation.fix`."""

from __future__ import annotations

import re
from pathlib import Path

from .._infra.records import record
from ..ir.program import Program
from .info import source_lines

CUDA_SCOPE = {"cta": "cuda::thread_scope_block", "gpu": "cuda::thread_scope_device",
              "sys": "cuda::thread_scope_system"}
SCOPE_WORD = {"cta": "block", "cluster": "cluster", "gpu": "device", "sys": "system"}
ORDER = {"relaxed": "memory_order_relaxed", "acquire": "memory_order_acquire",
         "release": "memory_order_release", "acq_rel": "memory_order_acq_rel", "sc": "memory_order_seq_cst"}
THREADFENCE = {"cta": "__threadfence_block()", "gpu": "__threadfence()", "sys": "__threadfence_system()"}
LEGACY_SUFFIX = {"cta": "_block", "gpu": "", "sys": "_system"}
WHAT = {"ld": "load", "st": "store", "atom": "atomic", "red": "atomic", "fence": "fence"}

_ORDER_RE = re.compile(r"\b((?:cuda::std::|cuda::|std::)?)memory_order_"
                       r"(relaxed|acquire|release|acq_rel|seq_cst|consume)\b")
_SCOPE_RE = re.compile(r"\b((?:cuda::)?)thread_scope_(block|device|system|cluster|thread)\b")
_LEGACY_RE = re.compile(r"\b(atomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor))(_block|_system)?\s*\(")
_FENCE_FN_RE = re.compile(r"\b__threadfence(_block|_system)?\s*\(\s*\)")
_STORE_RE = re.compile(r"^(?P<lhs>[^=;!<>+\-*/%&|^]+?)\s*=\s*(?P<rhs>[^=;][^;]*);")
_LOAD_RE = re.compile(r"^(?P<decl>[\w:<>\s]*?\b(?P<type>\w+)\s+\w+\s*=\s*)(?P<rhs>[\w.\->\[\]*()+\s]+);")


@record
class CudaEdit:
    """An edit at a CUDA line: ``file`` (as the user names it), ``line``, and the edit in words."""

    file: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{Path(self.file).name}:{self.line}: {self.text}"

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "edit": self.text}


def cuda_line(prog: Program, pos) -> tuple[str, int, str] | None:
    """The CUDA file, line and (stripped) text of a kernel instruction's position; the text is
    "" when the file is not at hand; None without line information."""
    src = getattr(pos, "src", None)
    if src is None or src.line <= 0:  # `.loc 1 0 0`: code of no source line (DWARF line 0)
        return None
    lines = source_lines(prog, src)
    text = lines[src.line - 1].strip() if lines and 0 < src.line <= len(lines) else ""
    return src.file, src.line, text


def _order_token(m: re.Match, sem: str) -> str:
    return f"{m.group(1)}{ORDER[sem]}"


def _scope_name(prefix: str, scope: str) -> str:
    """``cuda::thread_scope_device``; the cluster, which libcu++ (CUDA 13) names no scope for, as the
    device scope that holds it."""
    word = SCOPE_WORD[scope] if scope != "cluster" else "device"
    return f"{prefix}thread_scope_{word}"


def access_edit(prog: Program, pos, op: str, old: tuple[str, str | None], new: tuple[str, str | None],
                ptx: str = "", head: str = "") -> CudaEdit | None:
    """The CUDA edit that changes an access (``op``: ld st atom red) from ``old`` to ``new``
    (semantics, scope); ``ptx``, when given, the PTX edit, said when the line has nothing to
    rewrite (advice.py shows it on a line of its own instead)."""
    at = cuda_line(prog, pos)
    if at is None:
        return None
    file, line, text = at
    (osem, oscope), (nsem, nscope) = old, new
    if text and "asm" in text:
        return CudaEdit(file, line, _asm_edit(text, op, old, new))
    inline = inlined_asm(prog, pos, op, old) or asm_site(prog, pos, head)
    if inline is not None:  # the line calls a helper whose inline asm is the access
        aline, atext = inline
        return CudaEdit(file, aline, f"{_asm_edit(atext, op, old, new)} (the {WHAT.get(op, op)} "
                        f"at line {line}: `{text}`)")
    if osem != nsem:
        words = _sem_words(text, op, osem, nsem, nscope)
    else:
        found = _scope_words(prog, pos, text, op, oscope, nscope)
        if isinstance(found, CudaEdit):
            return found
        words = found
    return CudaEdit(file, line, words or f"make the {WHAT.get(op, op)} in `{text}` "
                    f"{_sem_phrase(nsem, nscope)}{_ptx(ptx)}")


def inlined_asm(prog: Program, pos, op: str, old: tuple[str, str | None]) -> tuple[int, str] | None:
    """The one ``asm`` line of the file that writes this access with its qualifiers
    (``st.release.gpu``), where the access's own line has none: a helper nvcc inlined (its
    ``.loc`` is the call's line)."""
    osem, oscope = old
    if osem in ("weak", "volatile") or oscope is None:
        return None
    pat = re.compile(rf"\b{op}\.{osem}\.{oscope}\b")
    lines = source_lines(prog, pos.src) or []
    hits = [(i + 1, ln.strip()) for i, ln in enumerate(lines)
            if "asm" in ln and pat.search(ln) and not ln.lstrip().startswith("//")]
    return hits[0] if len(hits) == 1 else None


def asm_site(prog: Program, pos, head: str) -> tuple[int, str] | None:
    """The one ``asm`` line of the file whose PTX holds ``head`` (an instruction's opcode and
    qualifiers, ``ld.cg.u32``, ``st.relaxed.gpu.v2.u32``: nvcc copies inline asm as written):
    the line an edit of that access changes, in a helper nvcc inlined at every call; None
    where there is not exactly one."""
    if getattr(pos, "src", None) is None or not head:
        return None
    pat = re.compile(rf"(?<![\w.]){re.escape(head)}(?![\w.])")
    lines = source_lines(prog, pos.src) or []
    hits = [(i + 1, ln.strip()) for i, ln in enumerate(lines)
            if "asm" in ln and pat.search(ln) and not ln.lstrip().startswith("//")]
    return hits[0] if len(hits) == 1 else None


_VEC_ASM_RE = re.compile(r"\b(?P<op>ld|st)(?P<quals>(?:\.[\w:]+)*?)\.v(?P<n>[24])\.(?P<type>[busf]\d+)\s+"
                         r"(?P<ops>[^;\"]*);")
_SEM_WORDS = ("weak", "relaxed", "volatile", "acquire", "release")
_SCOPE_WORDS = ("cta", "cluster", "gpu", "sys")


def _scalar_ptx(m: re.Match, k: int, sem: str, scope: str) -> str | None:
    """The scalar instructions of the vector access ``m`` (an asm string's PTX) split with
    element ``k`` as the flag (a store: last, as ``sem``; a load: first), joined as an asm
    string joins them; None where its operands are not ``[a]`` and ``{r0, ...}``."""
    op, n, typ = m.group("op"), int(m.group("n")), m.group("type")
    addr = re.search(r"\[([^\]]+)\]", m.group("ops"))
    vec = re.search(r"\{([^}]*)\}", m.group("ops"))
    if addr is None or vec is None or len(vec.group(1).split(",")) != n:
        return None
    regs = [r.strip() for r in vec.group(1).split(",")]
    quals = [q for q in m.group("quals").split(".") if q]
    plain = ".".join([op, *quals, typ])
    strong = ".".join([op, sem, scope, *[q for q in quals if q not in _SEM_WORDS + _SCOPE_WORDS], typ])
    width = int(typ[1:]) // 8

    def one(j: int) -> str:
        at = addr.group(1).strip() + (f"+{j * width}" if j else "")
        head = strong if j == k else plain
        return f"{head} [{at}], {regs[j]};" if op == "st" else f"{head} {regs[j]}, [{at}];"
    order = [j for j in range(n) if j != k]
    order = [*order, k] if op == "st" else [k, *order]
    return "\\n\\t".join(one(j) for j in order)


def split_edit(prog: Program, pos, op: str, head: str, k: int, new: tuple[str, str]) -> CudaEdit | None:
    """The CUDA edit that splits a vector access (``op``: ld, st; ``head`` its PTX opcode and
    qualifiers) into scalar accesses, element ``k`` the flag: a store's
    last, with ``new`` (release, scope), a load's first (acquire). In an ``asm`` string (the
    line's own or an inlined helper's) the PTX is rewritten; elsewhere said in words."""
    at = cuda_line(prog, pos)
    if at is None:
        return None
    file, line, text = at
    sem, scope = new
    what = WHAT.get(op, op)
    where = "last" if op == "st" else "first"
    why = (f"split the vector {what}: element {k} {where}, as a{'n' if sem == 'acquire' else ''} {sem} "
           "(PTX ISA 8.2.4: a vector's elements are accessed in an unspecified order; only separate "
           "accesses order the flag against the data)")
    helper = (line, text) if "asm" in text else asm_site(prog, pos, head)
    if helper is not None:
        aline, atext = helper
        m = _VEC_ASM_RE.search(atext)
        scalar = _scalar_ptx(m, k, sem, scope) if m is not None else None
        if scalar is not None:
            new_text = atext[:m.start()] + scalar + atext[m.end():]
            call = f" (the {what} at line {line}: `{text}`)" if aline != line else ""
            return CudaEdit(file, aline, f"`{atext}` → `{new_text}`: {why}{call}")
    order = "store(v, cuda::memory_order_release)" if op == "st" else "load(cuda::memory_order_acquire)"
    ref = f"cuda::atomic_ref<T, {CUDA_SCOPE.get(scope, CUDA_SCOPE['gpu'])}>(flag)"
    return CudaEdit(file, line, f"{why}, in `{text}`: the flag through `{ref}.{order}`")


def _scalar_word(m: re.Match) -> str | None:
    """The vector access ``m`` (an asm string's PTX) as ONE scalar access of the packed word, in
    a scoped register ``w``: ``{.reg .b64 w; mov.b64 w, {%1, %2}; st.relaxed.gpu.b64 [%0], w;}``
    (a load: the word loaded, then unpacked with ``mov.b64 {%0, %1}, w``; PTX ISA, mov: the first
    element the least significant); None where the operands are not ``[a]`` and ``{r0, ...}`` or
    the word is wider than 64 bits."""
    op, n, typ = m.group("op"), int(m.group("n")), m.group("type")
    addr = re.search(r"\[([^\]]+)\]", m.group("ops"))
    vec = re.search(r"\{([^}]*)\}", m.group("ops"))
    bits = n * int(typ[1:])
    if addr is None or vec is None or len(vec.group(1).split(",")) != n or bits > 64:
        return None
    big = f"b{bits}"
    head = ".".join([op, *[q for q in m.group("quals").split(".") if q], big])
    regs = "{" + vec.group(1).strip() + "}"
    if op == "st":
        return f"{{.reg .{big} w; mov.{big} w, {regs}; {head} [{addr.group(1).strip()}], w;}}"
    return f"{{.reg .{big} w; {head} w, [{addr.group(1).strip()}]; mov.{big} {regs}, w;}}"


def pack_edit(prog: Program, sites, region: str, bits: int) -> CudaEdit | None:
    """The CUDA edit that makes every vector access of ``region`` one ``bits``-bit scalar access
    (explanation/vecpack.py): ``sites`` each access's (position, op, PTX head); each ``asm`` line
    that writes one (its own line, or the helper nvcc inlined) rewritten, said at the first. None
    without a CUDA line; where an access is in no asm string, in words (a ``cuda::atomic_ref``
    of the packed word)."""
    edits: dict[int, str] = {}
    file = None
    plain: list[tuple[int, str]] = []
    for pos, _op, head in sites:
        at = cuda_line(prog, pos)
        if at is None:
            return None
        file, line, text = at
        helper = (line, text) if "asm" in text else asm_site(prog, pos, head)
        m = _VEC_ASM_RE.search(helper[1]) if helper is not None else None
        scalar = _scalar_word(m) if m is not None else None
        if helper is None or scalar is None:
            plain.append((line, text))
            continue
        aline, atext = helper
        edits.setdefault(aline, f"`{atext}` → `{atext[:m.start()]}{scalar}{atext[m.end():]}`")
    why = (f"every access of `{region}` one {bits}-bit scalar access: a vector access is a set of scalar "
           "accesses in an unspecified order (PTX ISA 8.2.4), a scalar access one memory operation, read "
           "and written whole")
    word = {64: "unsigned long long", 32: "unsigned int"}.get(bits, f"a {bits}-bit integer")
    for line, text in dict.fromkeys(plain):
        edits.setdefault(line, f"in `{text}`: access the packed word as one `{word}` "
                         f"(`cuda::atomic_ref<{word}, cuda::thread_scope_device>`), not as a vector")
    if file is None or not edits:
        return None
    first, *rest = sorted(edits)
    more = "".join(f"; and line {ln}: {edits[ln]}" for ln in rest)
    return CudaEdit(file, first, f"{edits[first]}{more} ({why})")


def _bracketed(text: str, start: int) -> str | None:
    """The text between the ``[`` at ``start`` and its matching ``]``."""
    depth = 0
    for j in range(start, len(text)):
        depth += {"[": 1, "]": -1}.get(text[j], 0)
        if depth == 0:
            return text[start + 1:j]
    return None


def guard_edit(prog: Program, pos, buffer: str, n: int) -> CudaEdit | None:
    """The CUDA edit that guards an access of ``buffer`` (``n`` elements as the launch gives it)
    by its index: ``if (i < 0 || i >= n) return;`` before the line, the index as the line
    writes it (``buffer[...]``), else in words."""
    at = cuda_line(prog, pos)
    if at is None:
        return None
    file, line, text = at
    m = re.search(rf"\b{re.escape(buffer)}\s*\[", text)
    idx = _bracketed(text, m.end() - 1) if m else None
    size = f" ({n}: the elements the launch gives `{buffer}`; in the kernel, the size passed beside it)"
    if idx:
        i = idx.strip() if re.fullmatch(r"[\w.]+", idx.strip()) else f"({idx.strip()})"
        return CudaEdit(file, line, f"insert `if ({i} < 0 || {i} >= {n}) return;` before line {line} "
                                    f"`{text}`{size}")
    return CudaEdit(file, line, f"guard the access of `{buffer}` in `{text}`: return before line {line} when "
                                f"its index is outside 0..{n - 1}{size}")


def _sem_phrase(sem: str, scope: str | None) -> str:
    scope_txt = f" at {SCOPE_WORD.get(scope or '', scope)} scope" if scope else ""
    return {"relaxed": "a relaxed atomic", "acquire": "an acquire", "release": "a release",
            "acq_rel": "acquire-release", "sc": "sequentially consistent"}.get(sem, sem) + scope_txt


def _sem_words(text: str, op: str, osem: str, nsem: str, nscope: str | None) -> str | None:
    m = _ORDER_RE.search(text)
    if m and osem != "weak":
        return f"`{text}` → `{text[:m.start()]}{_order_token(m, nsem)}{text[m.end():]}`"
    lm = _LEGACY_RE.search(text)
    if lm:
        member = {"atomicAdd": "fetch_add", "atomicSub": "fetch_sub", "atomicExch": "exchange",
                  "atomicMin": "fetch_min", "atomicMax": "fetch_max", "atomicAnd": "fetch_and",
                  "atomicOr": "fetch_or", "atomicXor": "fetch_xor",
                  "atomicCAS": "compare_exchange_strong"}.get(lm.group(1), "the matching member")
        fence = THREADFENCE.get(nscope or "gpu", "__threadfence()")
        how = {"release": f"or put `{fence}` just before it",
               "acquire": f"or put `{fence}` just after it"}.get(nsem,
                                                                 f"or put `{fence}` before and after it")
        return (f"`{lm.group(1)}{lm.group(2) or ''}` is relaxed: make it "
                f"`cuda::atomic_ref<T, {CUDA_SCOPE.get(nscope or 'gpu', 'cuda::thread_scope_device')}>(...)"
                f".{member}(..., cuda::{ORDER[nsem]})` in `{text}`, {how}")
    if osem in ("weak", "volatile"):
        return _plain_words(text, op, nsem, nscope)
    return None


def _atomic_ref(obj: str, scope: str | None, typ: str = "T") -> str:
    return f"cuda::atomic_ref<{typ}, {CUDA_SCOPE.get(scope or 'gpu', 'cuda::thread_scope_device')}>({obj})"


def _plain_words(text: str, op: str, nsem: str, nscope: str | None) -> str | None:
    """A plain (or volatile) access made strong through ``cuda::atomic_ref``."""
    if "volatile" in text:
        return None
    if op == "st":
        m = _STORE_RE.match(text)
        if m:
            lhs, rhs = m.group("lhs").strip(), m.group("rhs").strip()
            if not re.search(r"\w\s+\w", lhs):  # `data[0] = 42`, not a declaration `int x = ...`
                new = f"{_atomic_ref(lhs, nscope)}.store({rhs}, cuda::{ORDER[nsem]});"
                return f"`{text}` → `{new}`"
    if op == "ld":
        m = _LOAD_RE.match(text)
        if m:
            rhs = m.group("rhs").strip()
            new = f"{m.group('decl')}{_atomic_ref(rhs, nscope, m.group('type'))}.load(cuda::{ORDER[nsem]});"
            return f"`{text}` → `{new}`"
    what = WHAT.get(op, op)
    verb = {"st": "store(v, ", "ld": "load("}.get(op, "...(")
    return (f"make the {what} in `{text}` {_sem_phrase(nsem, nscope)}: "
            f"`{_atomic_ref('x', nscope)}.{verb}cuda::{ORDER[nsem]})`")


def _scope_words(prog: Program, pos, text: str, op: str, oscope: str | None,
                 nscope: str | None) -> str | CudaEdit | None:
    if nscope is None:
        return None
    m = _SCOPE_RE.search(text)
    if m and nscope in SCOPE_WORD:
        return f"`{text}` → `{text[:m.start()]}{_scope_name(m.group(1), nscope)}{text[m.end():]}`"
    lm = _LEGACY_RE.search(text)
    if lm and nscope in LEGACY_SUFFIX:
        new = text[:lm.start()] + lm.group(1) + LEGACY_SUFFIX[nscope] + text[lm.end(2) if lm.group(2) else
                                                                              lm.end(1):]
        return f"`{text}` → `{new}`"
    decl = _declared_scope(prog, pos, oscope)
    if decl is not None and nscope in SCOPE_WORD:
        file, line, dtext, dm = decl
        new = f"{dtext[:dm.start()]}{_scope_name(dm.group(1), nscope)}{dtext[dm.end():]}"
        return CudaEdit(file, line, f"`{dtext}` → `{new}` (the scope of the {WHAT.get(op, op)} "
                        f"at line {pos.src.line}: `{text}`)")
    return (f"widen the scope of the {WHAT.get(op, op)} in `{text}` to "
            f"{CUDA_SCOPE.get(nscope, nscope)}") if nscope else None


def _declared_scope(prog: Program, pos, oscope: str | None):
    """The nearest line at or before the access that names the access's old scope
    (``cuda::atomic_ref<int, cuda::thread_scope_block> f(flag[0]);``)."""
    if oscope not in SCOPE_WORD:
        return None
    lines = source_lines(prog, pos.src) or []
    for i in range(min(pos.src.line, len(lines)) - 1, -1, -1):
        if lines[i].lstrip().startswith(("//", "*", "/*")):  # a comment names no declaration
            continue
        for m in _SCOPE_RE.finditer(lines[i]):
            if m.group(2) == SCOPE_WORD[oscope]:
                return pos.src.file, i + 1, lines[i].strip(), _SCOPE_RE.search(lines[i].strip())
    return None


def _asm_edit(text: str, op: str, old: tuple[str, str | None], new: tuple[str, str | None]) -> str:
    (osem, oscope), (nsem, nscope) = old, new
    out = text
    if osem != nsem:
        if osem in ("weak", "volatile"):
            quals = f".{nsem}" + (f".{nscope}" if nscope else "")
            out = re.sub(rf"\b{op}(\.volatile)?\.", f"{op}{quals}.", out, count=1)
            if nsem != "weak":  # a cache operator is for weak accesses only (ptxas refuses .acquire.cg)
                out = re.sub(rf"(\b{op}\.[\w.:]*?)\.(?:ca|cg|cs|lu|cv|wb|wt)(?=\.)", r"\1", out, count=1)
        else:
            out = re.sub(rf"\.{osem}\b", f".{nsem}", out, count=1)
    if oscope and nscope and oscope != nscope:
        out = re.sub(rf"\.{oscope}\b", f".{nscope}", out, count=1)
    return f"`{text}` → `{out}`" if out != text else f"in `{text}`: {op} → {op}.{nsem}.{nscope}"


def fence_code(sem: str, scope: str) -> str:
    """The CUDA statement of a fence: ``__threadfence*()`` for fence.sc, else
    ``cuda::atomic_thread_fence`` (inline asm at cluster scope, which libcu++ does not name)."""
    if sem == "sc" and scope in THREADFENCE:
        return THREADFENCE[scope] + ";"
    if scope not in CUDA_SCOPE:
        return f'asm volatile("fence.{sem}.{scope};" ::: "memory");'
    return f"cuda::atomic_thread_fence(cuda::{ORDER[sem]}, {CUDA_SCOPE[scope]});"


def fence_insert(prog: Program, pos, sem: str, scope: str, thread: str) -> CudaEdit | None:
    """Insert a fence before the CUDA line of ``pos`` (the next memory access)."""
    at = cuda_line(prog, pos)
    if at is None:
        return None
    file, line, text = at
    alt = f" (or `{THREADFENCE[scope]}`)" if sem != "sc" and scope in THREADFENCE else ""
    before = f" `{text}`" if text else ""
    return CudaEdit(file, line, f"insert `{fence_code(sem, scope)}`{alt} in {thread} before line {line}"
                                f"{before}")


def _ptx(ptx: str) -> str:
    return f" (PTX: {ptx})" if ptx else ""


def fence_edit(prog: Program, pos, old: tuple[str, str], new: tuple[str, str],
               ptx: str = "") -> CudaEdit | None:
    """An existing fence made stronger (``new`` semantics) or wider (``new`` scope)."""
    at = cuda_line(prog, pos)
    if at is None:
        return None
    file, line, text = at
    (osem, oscope), (nsem, nscope) = old, new
    m = _FENCE_FN_RE.search(text)
    if m and nsem == "sc" and nscope in THREADFENCE:
        return CudaEdit(file, line, f"`{text}` → `{text[:m.start()]}{THREADFENCE[nscope]}{text[m.end():]}`")
    if "atomic_thread_fence" in text:
        new_text = text
        om = _ORDER_RE.search(new_text)
        if om and osem != nsem:
            new_text = new_text[:om.start()] + _order_token(om, nsem) + new_text[om.end():]
        sm = _SCOPE_RE.search(new_text)
        if sm and oscope != nscope and nscope in SCOPE_WORD:
            new_text = new_text[:sm.start()] + _scope_name(sm.group(1), nscope) + new_text[sm.end():]
        if new_text != text:
            return CudaEdit(file, line, f"`{text}` → `{new_text}`")
    if text and "asm" in text:
        return CudaEdit(file, line, _asm_edit(text, "fence", old, new))
    return CudaEdit(file, line, f"replace the fence of `{text}` by `{fence_code(nsem, nscope)}`{_ptx(ptx)}")


__all__ = ["CUDA_SCOPE", "CudaEdit", "access_edit", "cuda_line", "fence_code", "fence_edit", "fence_insert",
           "asm_site", "guard_edit", "inlined_asm", "pack_edit", "split_edit"]

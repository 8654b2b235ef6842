"""CUDA C++ for one litmus test: every test instruction is one ``asm volatile`` PTX statement with
the qualifiers, scope and type as written (memory clobber on memory operations and fences).

The generated translation unit holds four kernels:

* ``ptxmm_bump`` (one thread per iteration of the captured graph, launched once per graph): draws
  every iteration's permutations from a device-side seed and counter, resets the barriers;
* ``ptxmm_litmus``: the parallel test environment — each thread plays every role, each for a
  different instance, in a role order rotated by warp, after an optional bounded barrier (one
  arrival per block); blocks beyond the testing grid run memory stress; each testing block records
  the SM it ran on;
* ``ptxmm_check``: one thread per instance turns registers and final memory into an outcome key
  (plus "did not finish" and "every role on one SM", the latter from the blocks that played its
  roles, found by inverting the permutations), adds it to a histogram (warp-aggregated) and resets
  the instance's memory;
* ``ptxmm_audit_<k>``: role k alone, addresses as kernel parameters, for the SASS audit.

Every access adds its own zero offset read from device memory, so ptxas cannot prove two accesses
to one location equal and merge them (as measured on the H100)."""

from __future__ import annotations

import re

from ..ir.program import (
    Addr,
    Alu,
    Atom,
    Branch,
    Fence,
    Imm,
    Instruction,
    Label,
    Load,
    Mov,
    Nanosleep,
    Red,
    Reg,
    Ret,
    Selp,
    Setp,
    Store,
    Sym,
    Thread,
    value_operands,
)
from . import codegen_sync as hs
from .layout import Layout
from .operands import dst

SPIN_BOUND = 2048  # taken backward branches per role before the instance is "did not finish"

_PRELUDE = r"""
typedef unsigned int u32;
typedef unsigned long long u64;

__device__ __forceinline__ u32 ptxmm_hash(u32 x) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16; return x;
}
__device__ __forceinline__ u32 ptxmm_smid() {
    u32 s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s;
}
"""


def ident(name: str) -> str:
    return re.sub(r"\W", "_", name.lstrip("%"))


class _Role:
    """Emits the body of one role (one program thread)."""

    def __init__(self, lay: Layout, t: Thread, k: int, generic: bool = False):
        self.lay, self.t, self.k = lay, t, k
        self.generic = generic  # .global accesses by generic address (Env.generic)
        self.lines: list[str] = []
        self.n_access = 0
        self.regs: dict[str, bool] = {}  # C name → is 64-bit
        self.locs: list[str] = []
        self.cluster_regs: dict[str, int] = {}  # mapa.shared::cluster results → their width
        self.mapas: list[tuple[str, int]] = []  # (location, rank) of each mapa
        self.tmaps: list[str] = []  # tensor maps its tensor copies name (kernel parameters)
        self.idx = 0  # index of the instruction being emitted
        for ins in t.instrs:
            self.scan(ins)
            hs.scan(self, ins)
        for name, v in t.init_regs:
            self.regs.setdefault(name, isinstance(v, str))
            if isinstance(v, str) and v not in self.locs:
                self.locs.append(v)
        if any(isinstance(v, str) for _, v in t.init_regs):  # registers may hold any address
            self.locs += [loc.name for loc in lay.program.locations if loc.name not in self.locs
                          and loc.tensormap is None]

    def scan(self, ins: Instruction) -> None:
        """Note the registers (in order of first mention) and locations an instruction names."""
        d = dst(ins)
        if d is not None:
            wide = ins.type.endswith("64") or (isinstance(ins, Mov) and isinstance(ins.src, Sym))
            self.regs[d.name] = self.regs.get(d.name, False) or wide
        base = [ins.addr.base] if isinstance(ins, (Load, Store, Atom, Red)) else []
        for r in [s for s in value_operands(ins) if isinstance(s, Reg)] + (
                [ins.guard[0]] if ins.guard else []) + [b for b in base if isinstance(b, Reg)]:
            self.regs.setdefault(r.name, False)
        for o in [*value_operands(ins), *base]:
            if isinstance(o, Sym) and o.name not in self.locs:
                self.locs.append(o.name)

    # -- operands ------------------------------------------------------------------------------
    def r(self, name: str) -> str:
        return "R_" + ident(name)

    def val(self, o, wide: bool) -> str:
        if isinstance(o, Imm):
            return f"(u64){o.value & ((1 << 64) - 1)}ULL" if wide else f"(u32){o.value & 0xffffffff}U"
        if isinstance(o, Sym):
            return f"(u64)A_{ident(o.name)}"
        return f"(u64){self.r(o.name)}" if wide else f"(u32){self.r(o.name)}"

    def addr(self, a: Addr, space: str | None) -> tuple[str, str]:
        """(constraint, expression) of a memory operand, with this access's zero offset."""
        z = f"z[{self.n_access}]"
        self.n_access += 1
        base = f"A_{ident(a.base.name)}" if isinstance(a.base, Sym) else f"((u32*){self.r(a.base.name)})"
        ptr = f"({base} + {z})"
        cluster = hs.cluster_addr(self, a, z) if self.cluster_regs else None
        if cluster is not None:
            return cluster
        if space == "shared":
            return "r", f"(u32)__cvta_generic_to_shared({ptr})"
        return "l", ptr

    # -- instructions --------------------------------------------------------------------------
    def emit(self, ins: Instruction) -> None:
        body = self.instr(ins)
        if ins.guard is not None and not isinstance(ins, Label):
            reg, neg = ins.guard
            body = [f"if ({self.r(reg.name)} {'==' if neg else '!='} 0) {{"] + [
                "    " + b for b in body] + ["}"]
        self.lines += body

    def instr(self, ins: Instruction) -> list[str]:
        emit = _EMIT.get(type(ins)) or hs.EMIT.get(type(ins))
        if emit is None:  # layout._check_supported rejected everything else
            raise AssertionError(ins)
        return emit(self, ins)

    def mem_quals(self, ins: Load | Store | Atom | Red) -> str:
        space = f".{ins.space}" if ins.space and not (self.generic and ins.space == "global") else ""
        if ins.space == "shared" and "shared::cluster" in ins.text:  # DSMEM (mapa addresses)
            space = ".shared::cluster"
        plain = isinstance(ins, (Load, Store))
        if plain and ins.volatile:
            return f".volatile{space}"
        if plain and ins.sem == "weak":
            return space
        return f".{ins.sem}.{ins.scope or 'gpu'}{space}"

    def load(self, ins: Load) -> list[str]:
        c, a = self.addr(ins.addr, ins.space)
        return [f'{{ u32 t; asm volatile("ld{self.mem_quals(ins)}.{ins.type} %0, [%1];" '
                f': "=r"(t) : "{c}"({a}) : "memory"); {self.r(ins.dst.name)} = t; }}']

    def store(self, ins: Store) -> list[str]:
        c, a = self.addr(ins.addr, ins.space)
        return [f'asm volatile("st{self.mem_quals(ins)}.{ins.type} [%0], %1;" '
                f':: "{c}"({a}), "r"({self.val(ins.src, False)}) : "memory");']

    def rmw(self, ins: Atom | Red) -> list[str]:
        # Dat3M spellings with no PTX instruction: `.sub` becomes `.add` of the negation, and
        # `red.acq_rel` (red has only .relaxed/.release) becomes `atom.acq_rel` whose result
        # is dropped: the same RMW with the same ordering.
        ty = atom_type(ins)
        c, a = self.addr(ins.addr, ins.space)
        aop = "add" if ins.op == "sub" else ins.op
        as_atom = isinstance(ins, Atom) or ins.sem in ("acquire", "acq_rel")
        q = f"{'atom' if as_atom else 'red'}{self.mem_quals(ins)}.{aop}.{ty}"
        ops = value_operands(ins)
        srcs = ", ".join(f'"r"({self.val(s, False)})' for s in ops)
        operands = ", ".join(f"%{i + 2}" for i in range(len(ops)))
        text = f"{q} %0, [%1], {operands};"
        if ins.op == "sub":
            text = f"{{ .reg .b32 n; neg.s32 n, %2; {q} %0, [%1], n; }}"
        if not as_atom:
            text = text.replace(" %0, [%1],", " [%1],")
            return [f'asm volatile("{text}" :: "r"(0U), "{c}"({a}), {srcs} : "memory");']
        result = self.r(ins.dst.name) + " = t;" if isinstance(ins, Atom) else ""
        return [f'{{ u32 t; asm volatile("{text}" : "=r"(t) : '
                f'"{c}"({a}), {srcs} : "memory"); {result} }}']

    def fence(self, ins: Fence) -> list[str]:
        restrict = f"{ins.restrict}." if ins.restrict else ""
        return [f'asm volatile("fence.{restrict}{ins.sem}.{ins.scope};" ::: "memory");']

    def mov(self, ins: Mov) -> list[str]:
        if isinstance(ins.src, Sym):
            return [f"{self.r(ins.dst.name)} = (u64)A_{ident(ins.src.name)};"]
        return self.alu_asm(ins, f"mov.b{width(ins)}", [ins.src])

    def selp(self, ins: Selp) -> list[str]:
        w = width(ins)
        c = "l" if w == 64 else "r"
        return [f'{{ {ctype(w)} d; asm volatile("{{ .reg .pred q; setp.ne.b32 q, %3, 0; '
                f'selp.b{w} %0, %1, %2, q; }}" : "={c}"(d) : "{c}"({self.val(ins.a, w == 64)}), '
                f'"{c}"({self.val(ins.b, w == 64)}), "r"({self.val(ins.p, False)})); '
                f"{self.r(ins.dst.name)} = d; }}"]

    def branch(self, ins: Branch) -> list[str]:
        return [f"if (++steps > {SPIN_BOUND}) goto DNF; goto L_{ident(ins.target)};"]

    def label(self, ins: Label) -> list[str]:
        return [f"L_{ident(ins.name)}: ;"]

    def ret(self, ins: Ret) -> list[str]:
        return ["goto END;"]

    def nanosleep(self, ins: Nanosleep) -> list[str]:
        return [f'asm volatile("nanosleep.u32 %0;" :: "r"((u32)({self.val(ins.t, False)})));']

    def alu_asm(self, ins: Instruction, mnemonic: str, srcs: list, shift_last: bool = False) -> list[str]:
        w = width(ins)
        c = "l" if w == 64 else "r"
        ins_c = []
        for i, s in enumerate(srcs):
            narrow = shift_last and i == len(srcs) - 1
            ins_c.append(f'"{"r" if narrow else c}"({self.val(s, w == 64 and not narrow)})')
        operands = ", ".join(f"%{i}" for i in range(len(srcs) + 1))
        return [f'{{ {ctype(w)} d; asm volatile("{mnemonic} {operands};" : "={c}"(d) : '
                f'{", ".join(ins_c)}); {self.r(ins.dst.name)} = d; }}']

    def alu(self, ins: Alu) -> list[str]:
        w = width(ins)
        signed = ins.type.startswith("s")
        aop = ins.op
        if aop in ("and", "or", "xor", "not"):
            return self.alu_asm(ins, f"{aop}.b{w}", list(ins.srcs))
        if aop in ("shl", "shr"):
            t = f"s{w}" if signed and aop == "shr" else (f"b{w}" if aop == "shl" else f"u{w}")
            return self.alu_asm(ins, f"{aop}.{t}", list(ins.srcs), shift_last=True)
        if aop in ("min", "max"):  # .u and .b types compare unsigned, as PTX's min.u/max.u
            t = f"u{w}" if _unsigned(ins.type) else f"s{w}"
            return self.alu_asm(ins, f"{aop}.{t}", list(ins.srcs))
        if aop == "neg":
            return self.alu_asm(ins, f"neg.s{w}", list(ins.srcs))
        t = f"{'s' if signed else 'u'}{w}"
        if aop == "mul":
            return self.alu_asm(ins, f"mul.lo.{t}", list(ins.srcs))
        return self.alu_asm(ins, f"{aop}.{t}", list(ins.srcs))

    def setp(self, ins: Setp) -> list[str]:
        """The comparison as ``setp.{eq,ne,lt,le,gt,ge}.{s,u}W``: lo ls hi hs are the unsigned
        lt le gt ge; lt..ge compare unsigned on .u and .b types."""
        w = width(ins)
        cmp = _UNSIGNED_CMP.get(ins.cmp, ins.cmp)
        unsigned = ins.cmp in _UNSIGNED_CMP or _unsigned(ins.type)
        t = f"{'u' if unsigned else 's'}{w}"
        c = "l" if w == 64 else "r"
        a, b = ins.a, ins.b
        return [f'{{ u32 d; asm volatile("{{ .reg .pred q; setp.{cmp}.{t} q, %1, %2; '
                f'selp.u32 %0, 1, 0, q; }}" : "=r"(d) : "{c}"({self.val(a, w == 64)}), '
                f'"{c}"({self.val(b, w == 64)})); {self.r(ins.dst.name)} = d; }}']

    # -- the whole role ------------------------------------------------------------------------
    def function(self) -> str:
        for k, ins in enumerate(self.t.instrs):
            self.idx = k
            self.emit(ins)
        lay = self.lay
        params = ", ".join([f"u32* A_{ident(n)}" for n in self.locs] + [
            "const u32* z", "u64* out", "u32* dnf"] + hs.role_params(self))
        decl = []
        init = dict(self.t.init_regs)
        for name in self.regs:
            v = init.get(name, 0)
            v = f"(u64)A_{ident(v)}" if isinstance(v, str) else f"{v & ((1 << 64) - 1)}ULL"
            decl.append(f"    u64 {self.r(name)} = {v}; (void){self.r(name)};")
        out = []
        for s in lay.slots:
            if s.role == self.k:
                mask = "" if self.regs.get(s.reg, False) else " & 0xffffffffULL"
                out.append(f"    out[{s.res_index}] = {self.r(s.reg)}{mask};")
        body = "\n".join("    " + ln for ln in self.lines)
        loops = any(isinstance(ins, Branch) for ins in self.t.instrs)
        has_ret = any(isinstance(ins, Ret) for ins in self.t.instrs)
        if not loops:
            body += "\n    (void)dnf; (void)z;" if lay.sync is not None else "\n    (void)dnf;"
        return (f"// role {self.k}: thread {self.t.name}\n"
                f"__device__ __forceinline__ void ptxmm_role_{self.k}({params}) {{\n"
                + "\n".join(decl) + ("\n    u32 steps = 0;\n" if loops else "\n")
                + body + ("\n    goto END;\nDNF:\n    *dnf = 1;" if loops else "")
                + ("\nEND: ;\n" if loops or has_ret else "\n") + "\n".join(out) + "\n}\n")


_EMIT = {Load: _Role.load, Store: _Role.store, Atom: _Role.rmw, Red: _Role.rmw, Fence: _Role.fence,
         Mov: _Role.mov, Alu: _Role.alu, Setp: _Role.setp, Selp: _Role.selp, Branch: _Role.branch,
         Label: _Role.label, Ret: _Role.ret, Nanosleep: _Role.nanosleep}
_UNSIGNED_CMP = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


def _unsigned(ty: str) -> bool:
    return ty.startswith(("u", "b"))


def width(ins: Load | Store | Atom | Red | Mov | Alu | Setp | Selp) -> int:
    return 64 if ins.type.endswith("64") else 32


def ctype(w: int) -> str:
    return "u64" if w == 64 else "u32"


def atom_type(ins: Atom | Red) -> str:
    if ins.op in ("and", "or", "xor", "exch", "cas"):
        return "b32"
    if ins.op in ("add", "min", "max") and ins.type.startswith("s"):
        return "s32"
    return "u32"


def fusable(lay: Layout) -> bool:
    """Whether the roles can run fused (Env.fused): straight-line roles (no branch, label or
    ``ret``), no synchronization, no ``.shared`` locations."""
    if lay.sync is not None or lay.shared:
        return False
    return not any(isinstance(ins, (Branch, Label, Ret)) for t in lay.program.threads for ins in t.instrs)


def generate(lay: Layout, fused: bool = False, generic: bool = False, tail_fence: bool = False) -> str:
    """The CUDA C++ translation unit for a layout. ``fused`` (only where :func:`fusable`): each
    thread issues all its roles back to back and stores their registers after the last one;
    ``tail_fence`` (fused only): a ``fence.sc.sys`` before those stores. ``generic``: every
    ``.global`` access addresses its location generically (no state space: SASS ``LD``/``ST``/``ATOM``
    rather than ``LDG``/``STG``/``ATOMG``) — the same accesses to the same global words."""
    prog = lay.program
    roles = [_Role(lay, t, k, generic) for k, t in enumerate(prog.threads)]
    fns = [r.function() for r in roles]
    n = len(roles)
    cta_of = lay.ctas
    zbase = lay.access_base

    src = [f"// ptxmm litmus harness for {prog.name} ({prog.file})", _PRELUDE]
    if lay.tensor is not None:  # CUtensorMap (tensor copies, tensor.py)
        src.insert(1, "#include <cuda.h>")
    src.append(f"#define NROLES {n}\n#define LG {lay.n_global_slots}\n#define NZ {lay.n_zero}\n"
               f"#define CS {lay.cluster_size}\n#define NGROUPS {lay.n_groups}\n"
               f"#define NSHARED {len(lay.shared)}\n#define NCTA {len(cta_of)}\n"
               f"#define NRES {max(1, lay.n_res)}\n#define HSIZE {lay.hist_size}U\n"
               f"#define HCOPIES {lay.hist_copies}U")
    src.append("""
struct Params {  // Layout.params_words 32-bit words, one per iteration of the graph
    u32 iter, qinv, qb, ob, d, pl, ol, use_bar;
    u32 pm[LG], om[LG];
    u32 zero[NZ];
};

// ctr[0]: graphs launched so far, ctr[1]: the seed; thread j of the one block fills p[j]
extern "C" __global__ void ptxmm_bump(Params* ps, u32* ctr, u32* bars, u32 nc, u32 bsz, u32 n,
                                      u32 barrier_pct, u32 stripe, u32 coalesce) {
    const u32 j = threadIdx.x, ipg = blockDim.x;
    const u32 it = ctr[0] * ipg + j + 1U;
    __syncthreads();
    if (j == 0) ctr[0] += 1U;
    Params* p = ps + j;
    p->iter = it;
    bars[j] = 0U;
    u32 h = ptxmm_hash(ctr[1] ^ (it * 0x9e3779b9U));
    u32 q = (h | 1U) & (nc - 1U); if (nc == 1) q = 0;
    u32 inv = q;  // q's inverse mod 2^32 (q odd): Newton steps double the correct bits 3→48
    for (int k = 0; k < 4; k++) inv *= 2U - q * inv;
    p->qb = q; p->qinv = inv;
    h = ptxmm_hash(h + 1U); p->ob = h & (nc - 1U);
    u32 span = nc / NGROUPS; if (span < 1U) span = 1U;
    h = ptxmm_hash(h + 2U); p->d = 1U + h % span;
    if (stripe) p->d = stripe < span ? stripe : span;  // CTA groups a fixed distance apart
    h = ptxmm_hash(h + 3U); p->pl = (h | 1U) & (bsz - 1U);
    h = ptxmm_hash(h + 4U); p->ol = h & (bsz - 1U);
    if (coalesce) { p->pl = 1U; p->ol = 0U; }  // lane l plays instance slot l
    for (int m = 0; m < LG; m++) {
        h = ptxmm_hash(h + 5U + m); p->pm[m] = m == 0 ? 1U : (h | 1U);
        h = ptxmm_hash(h + 7U); p->om[m] = m == 0 ? 0U : h & (n - 1U);
    }
    h = ptxmm_hash(h + 11U); p->use_bar = (h % 100U) < barrier_pct;
    for (int k = 0; k < NZ; k++) p->zero[k] = 0U;
}

__device__ __forceinline__ u32 ptxmm_slot(const Params* p, u32 m, u32 i, u32 n) {
    return (((i * p->pm[m] + p->om[m]) & (n - 1U)) * LG + m);
}
""" + hs.tensor_prelude(lay))
    src += fns
    if lay.sync is not None:
        return _generate_sync(lay, roles, src)
    # litmus kernel: role dispatch
    cases = []
    for k, (role, rl) in enumerate(zip(lay.roles, roles)):
        args = []
        for name in rl.locs:
            loc = prog.location(name)
            if loc.space == "shared":
                args.append(f"sh + ({lay.shared.index(name)} * NCTA + {cta_of[(role.cg, role.rank)]}) "
                            "* bsz + li")
            else:
                args.append(f"mem + ptxmm_slot(p, {lay.globals_.index(name)}, i, n) * stride")
        args += [f"z + {zbase[k]}", "res + (u64)i * NRES", "dnf + i"]
        cases.append(f"""            case {k}: {{
{_instance(role, "wgap")}
                ptxmm_role_{k}({", ".join(args)});
                break;
            }}""")
    if fused:
        if not fusable(lay):
            raise ValueError("fused roles need straight-line roles without .shared locations")
        src.append("\n" + _kernel_head(lay, "", "") + _fused_body(lay, roles, tail_fence) + "}\n")
        src.append(_check_kernel(lay))
        src += [_audit_kernel(lay, rl) for rl in roles]
        return "\n".join(src)
    shared_init = ""
    if lay.shared:
        inits = [f"sh[({s} * NCTA + g) * bsz + threadIdx.x] = {lay.init[name] & 0xffffffff}U;"
                 for s, name in enumerate(lay.shared)]
        shared_init = ("    for (u32 g = 0; g < NCTA; g++) { " + " ".join(inits) + " }\n"
                       "    __syncthreads();\n")
    shared_final = ""
    fin = [sl for sl in lay.slots if sl.shared_loc >= 0]
    if fin:  # final values of shared locations, read by the first role of the CTA that holds them
        role = lay.roles[0]
        g = cta_of[(role.cg, role.rank)]
        writes = " ".join(f"shfin[(u64)i * NSHARED + {sl.shared_loc}] = "
                          f"sh[({sl.shared_loc} * NCTA + {g}) * bsz + li];" for sl in fin)
        shared_final = ("    __syncthreads();\n    rep = 0;  // one plane: Harness keeps reps = 1\n    {\n"
                        + _instance(role, "wgap") + "\n                "
                        + writes + "\n    }\n")
    src.append("\n" + _kernel_head(lay, "    extern __shared__ u32 sh[];\n", shared_init) + """\
    const u32 rot = rotate ? (warp + b) % NROLES : 0U;
    u32 rep = 0;
    // instance planes played back to back: plane rep holds instances [rep * np, (rep + 1) * np)
    for (rep = 0; rep < reps; rep++) {
        for (u32 j = 0; j < NROLES; j++) {
            u32 k = j + rot; if (k >= NROLES) k -= NROLES;
            switch (k) {
""" + "\n".join(cases) + """
            }
        }
    }
""" + shared_final + "}\n")
    src.append(_check_kernel(lay))
    src += [_audit_kernel(lay, rl) for rl in roles]
    return "\n".join(src)


def _fused_body(lay: Layout, roles: list[_Role], tail_fence: bool = False) -> str:
    """Fused roles: per instance plane, the instance of every role first, then the roles back to
    back in one straight line (order rotated by warp: one straight line per rotation), then (with
    ``tail_fence``) a ``fence.sc.sys``, then the registers. No role's result is stored (waited
    for) before the last role has issued."""
    n = len(roles)
    calls = []
    for k, rl in enumerate(roles):
        args = [f"mem + ptxmm_slot(p, {lay.globals_.index(name)}, I[{k}], n) * stride" for name in rl.locs]
        args += [f"z + {lay.access_base[k]}", f"o{k}", f"dnf + I[{k}]"]
        calls.append(f"ptxmm_role_{k}({', '.join(args)});")
    cases = []
    for r in range(n):
        line = " ".join(calls[(r + j) % n] for j in range(n))
        cases.append(f"            case {r}: {line} break;")
    insts = "\n".join(f"        {{\n{_instance(role, 'wgap')}\n                I[{k}] = i;\n        }}"
                       for k, role in enumerate(lay.roles))
    outs = " ".join(f"u64 o{k}[NRES];" for k in range(n))
    tail = '        asm volatile("fence.sc.sys;" ::: "memory");  // as the runner\'s kernels end'
    stores = [tail] if tail_fence else []
    for s in lay.slots:
        if s.role >= 0:
            stores.append(f"        res[(u64)I[{s.role}] * NRES + {s.res_index}] = o{s.role}[{s.res_index}];")
    return f"""    const u32 rot = rotate ? (warp + b) % NROLES : 0U;
    for (u32 rep = 0; rep < reps; rep++) {{
        u32 I[NROLES];
{insts}
        {outs}
        switch (rot) {{
{chr(10).join(cases)}
        }}
{chr(10).join(stores)}
    }}
"""


def _role_args(lay: Layout, k: int, role, rl: _Role) -> list[str]:
    """Arguments of role k's function in a synchronized test (16-byte chunks under bulk copies,
    mbarrier objects in their own region; shared regions per instance, codegen_sync.region)."""
    prog = lay.program
    g = hs.region(role.cg)

    def shared_slot(name: str) -> str:
        if name in lay.mbars:
            return f"(u32*)(mb + ({lay.mbars.index(name)} * NREG + {g}) * bsz + li)"
        return f"sh + {lay.shared_word(name, g, 'li')}"

    args = []
    for name in rl.locs:
        if prog.location(name).space == "shared":
            args.append(shared_slot(name))
        else:
            args.append(f"mem + {lay.global_word(name)}")
    args += [f"z + {lay.access_base[k]}", "res + (u64)i * NRES", "dnf + i"]
    return args + hs.role_args(lay, role, rl)


def _generate_sync(lay: Layout, roles: list[_Role], src: list[str]) -> str:
    """The litmus kernel of a synchronized test (sync.py: step schedule, barriers, mbarriers,
    DSMEM, bulk copies); the check and audit kernels as for any test."""
    sp = lay.sync
    mul = f" * {lay.chunk}U" if lay.chunk > 1 else ""
    cases = []
    for k, (role, rl) in enumerate(zip(lay.roles, roles)):
        slot = (role.cg * lay.cluster_size + role.rank) * sp.mw + role.warp
        cases.append((slot, f"{_instance(role)}\n                "
                            f"ptxmm_role_{k}({', '.join(_role_args(lay, k, role, rl))});"))
    shared_final = ""
    fin = [sl for sl in lay.slots if sl.shared_loc >= 0]
    if fin:  # final values of shared locations, read by the first role's slot of its CTA
        role = lay.roles[0]
        g = hs.region(role.cg)
        writes = " ".join(f"shfin[(u64)i * NSHARED + {sl.shared_loc}] = "
                          f"sh[{lay.shared_word(lay.shared[sl.shared_loc], g, 'li')}];" for sl in fin)
        shared_final = ("    __syncthreads();\n    rep = 0;  // one plane: Harness keeps reps = 1\n    {\n"
                        + _instance(role) + "\n                " + writes + "\n    }\n")
    mbase = f"NSHARED * NREG * bsz{mul}" if lay.tensor is None else \
        f"{lay.shared_columns}U * NREG * bsz{mul}"
    base = ("    extern __shared__ __align__(16) u32 sh[];\n" if lay.tensor is None else
            # tensor boxes need 128-byte aligned shared addresses: round the base up (tensor.py;
            # shared_bytes adds the slack)
            "    extern __shared__ __align__(128) u32 ptxmm_shraw[];\n"
            "    u32* sh = (u32*)(((u64)ptxmm_shraw + 127ULL) & ~127ULL);\n")
    decl = (base +
            "    __shared__ u32 ptxmm_passed[16];  // quorum barriers: lanes that passed, per barrier\n"
            f"    u64* mb = (u64*)(sh + {mbase});  // mbarrier objects\n"
            "    (void)mb; (void)ptxmm_passed; (void)rotate;\n")
    src.append(f"#define MW {sp.mw}U\n#define NBARIDS {max(1, len(sp.bar_ids))}U\n"
               "#define NREG (NGROUPS * CS)\n"
               + _kernel_head(lay, decl, hs.prologue(lay, mul))
               + hs.step_loop(lay, cases, mul) + shared_final + "}\n")
    src.append(_check_kernel(lay, dnf=sp.needs_dnf or None))
    src += [_audit_kernel(lay, rl) for rl in roles]
    return "\n".join(src)


def _kernel_head(lay: Layout, shared_decl: str, prologue: str) -> str:
    """The litmus kernel's signature and first part, shared by every test: the memory stress
    blocks, the permutation parameters, the zero offsets, then ``prologue`` (shared memory set-up)
    and the bounded barrier over the testing blocks (one arrival per block)."""
    cluster = f"__cluster_dims__({lay.cluster_size}, 1, 1) " if lay.cluster_size > 1 else ""
    return f"""extern "C" __global__ void {cluster}__launch_bounds__(1024, 2) ptxmm_litmus(
        const Params* __restrict__ p, u32* mem, u64* res, u32* bsm, u32* dnf, u32* bar, u32* scratch,
        u32* shfin, u32 nb, u32 bsz, u32 stride, u32 rotate, u32 stress_loops, u32 stress_lines,
        u32 stress_line_words, u32 reps, u32 pre_loops, u32 wgap, u32 tbar{hs.tensor_params(lay)}) {{
{shared_decl}    const u32 b = blockIdx.x, lane = threadIdx.x, warp = lane >> 5;
    if (b >= nb) {{  // memory stress blocks
        u32 line = ptxmm_hash(p->iter * 977U + b) % stress_lines;
        volatile u32* s = scratch + line * stress_line_words;
        u32 acc = 0, w = lane % stress_line_words;
        for (u32 k = 0; k < stress_loops; k++) {{ s[w] = k; acc += s[(w + 1) % stress_line_words]; }}
        if (acc == 0x9e3779b9U) scratch[0] = acc;
        return;
    }}
    const u32 np = nb * bsz, n = np * reps, nc = nb / CS, c = b / CS, rho = b % CS;
    const u32 qb = p->qb, ob = p->ob, d = p->d, pl = p->pl, ol = p->ol;
    u32 z[NZ];
    for (int j = 0; j < NZ; j++) z[j] = p->zero[j];
    if (lane == 0U) bsm[b] = ptxmm_smid();
{prologue}    if (pre_loops) {{  // pre-stress: every testing thread hammers a stress line, then the barrier
        volatile u32* s = scratch + (b % stress_lines) * stress_line_words;
        u32 acc = 0, w = lane % stress_line_words;
        for (u32 k = 0; k < pre_loops; k++) {{ s[w] = k; acc += s[(w + 1) % stress_line_words]; }}
        if (acc == 0x9e3779b9U) scratch[0] = acc;
    }}
    if (p->use_bar && tbar) {{  // every thread arrives and polls at most 1024 times (the runner's spin)
        u32 v = atomicAdd(bar, 1U);
        for (u32 k = 0; k < 1024U && v < nb * bsz; k++) v = *(volatile u32*)bar;
    }} else if (p->use_bar) {{  // bounded barrier over the testing blocks: one arrival per block
        __syncthreads();
        if (lane == 0U) {{
            atomicAdd(bar, 1U);
            for (u32 k = 0; k < 4096U && *(volatile u32*)bar < nb; k++) {{ }}
        }}
        __syncthreads();
    }}
"""


def _instance(role, gap: str = "") -> str:
    """The instance (and its lane slot) whose role ``role`` this physical thread plays. Roles of one
    CTA sit ``gap`` lanes apart (the kernel's ``wgap``: 32, one warp each, unless Env.warp_gap says
    fewer); synchronized tests keep whole warps (no ``gap``)."""
    off = f"{role.warp}U * {gap}" if gap else f"{32 * role.warp}U"
    return f"""                u32 cc = (c + nc - ({role.cg}U * d) % nc) & (nc - 1U);
                u32 ci = (cc * qb + ob) & (nc - 1U);
                u32 ri = (rho + CS - {role.rank}U) % CS;
                u32 li = (((lane + bsz - {off}) & (bsz - 1U)) * pl + ol) & (bsz - 1U);
                u32 i = (ci * CS + ri) * bsz + li + rep * np;"""


def _code(s, expr: str) -> str:
    wide = any(not -(1 << 31) <= v < (1 << 32) for v in s.values)
    v = expr if wide else f"({expr} & 0xffffffffULL)"
    parts = []
    for code, val in enumerate(s.values):
        c = val & ((1 << 64) - 1) if wide else val & 0xffffffff
        parts.append(f"{v} == {c}ULL ? {code}U")
    return "(" + " : ".join(parts + [f"{len(s.values)}U"]) + ")"


def _check_kernel(lay: Layout, exchange: str = "all", dnf: bool | None = None) -> str:
    """One thread per instance: its outcome key, histogrammed (warp-aggregated), and its memory reset.

    A global location's final value is read and reset to its initial value by one ``atomicExch``
    (``exchange="all"``): the slots of one instance are scattered by the permutations, so a plain
    load then store costs two 32-byte sector transactions per slot and the exchange one (the litmus
    kernel has finished: nothing else touches the slot). ``"perm"`` exchanges every location but
    the first, ``"none"`` loads and stores (the older code, kept for benchmarks)."""
    lines = []
    resets = []
    for s in lay.slots:
        if s.loc >= 0:
            if exchange == "all" or (exchange == "perm" and s.loc > 0):
                expr = f"(u64)fin{s.loc}"
            else:
                expr = f"(u64)mem[{lay.global_word(lay.globals_[s.loc])}]"
        elif s.shared_loc >= 0:
            expr = f"(u64)shfin[(u64)i * NSHARED + {s.shared_loc}]"
        else:
            expr = f"res[(u64)i * NRES + {s.res_index}]"
        lines.append(f"    key |= {_code(s, expr)} << {s.shift};")
    fins = []
    for m, name in enumerate(lay.globals_):
        init = lay.init[name] & 0xffffffff
        if exchange == "all" or (exchange == "perm" and m > 0):
            slot = f"&mem[{lay.global_word(name)}]"
            fins.append(f"    const u32 fin{m} = atomicExch({slot}, {init}U);")
        else:
            resets.append(f"    mem[{lay.global_word(name)}] = {init}U;")
    if dnf is None:  # an instance can fail to finish when some thread loops
        dnf = any(isinstance(ins, Branch) for t in lay.program.threads for ins in t.instrs)
    dnf_line = f"    if (dnf[i]) {{ key |= 1U << {lay.dnf_bit}; dnf[i] = 0; }}\n" if dnf else ""
    blocks = {(r.cg, r.rank) for r in lay.roles}
    same = ""
    if len(blocks) > 1:  # the block that played each role of instance i: the litmus map inverted
        same = ("    {\n        const u32 il = i & (np - 1U), nc = np / (CS * bsz), ci = il / (CS * bsz);\n"
                "        const u32 ri = (il / bsz) % CS;\n"
                "        const u32 cc = ((ci + nc - p->ob) * p->qinv) & (nc - 1U);\n"
                "        u32 s0 = 0xffffffffU, same = 1U;\n")
        for cg, rank in sorted(blocks):
            same += (f"        {{ u32 c = (cc + ({cg}U * p->d) % nc) & (nc - 1U); "
                     f"u32 s = bsm[c * CS + (ri + {rank}U) % CS]; "
                     "if (s0 == 0xffffffffU) s0 = s; else same &= s == s0; }\n")
        same += f"        if (same) key |= 1U << {lay.samesm_bit};\n    }}\n"
    else:
        same = f"    key |= 1U << {lay.samesm_bit};\n"
    return f"""
extern "C" __global__ void __launch_bounds__(256) ptxmm_check(const Params* __restrict__ p, u32* mem,
        const u64* res, const u32* bsm, u32* dnf, const u32* shfin, u64* hist, u32 n, u32 bsz,
        u32 stride, u32 np) {{
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
{chr(10).join(fins)}
    u32 key = 0;
{chr(10).join(lines)}
{dnf_line}{same}{chr(10).join(resets)}
    u32 mask = __match_any_sync(__activemask(), key);
    // copy (warp mod HCOPIES) of the histogram: most instances share an outcome, and one counter
    // taking every warp's atomic serialises the kernel
    u64* h = hist + (u64)((i >> 5) & (HCOPIES - 1U)) * HSIZE;
    if ((threadIdx.x & 31U) == (u32)(__ffs(mask) - 1)) atomicAdd(&h[key], (u64)__popc(mask));
}}
"""


def _audit_kernel(lay: Layout, rl: _Role) -> str:
    """Role k alone. Addresses and zero offsets arrive as kernel parameters (constant bank) and the
    role's results go to registers first, then a ``nanosleep`` marker, then global memory: in its
    SASS, the memory instructions before the marker are exactly the test's own."""
    nz = max(1, rl.n_access)
    n_out = max(1, lay.n_res)
    extra = hs.role_params(rl)  # synchronized tests: barrier group, DSMEM peers (parameters here)
    params = ", ".join([f"u32* A_{ident(n)}" for n in rl.locs] + [f"u32 z{j}" for j in range(nz)]
                       + ["u64* out", "u32* dnf"] + extra)
    args = ", ".join([f"A_{ident(n)}" for n in rl.locs] + ["zz", "o", "&d"]
                     + [x.split()[-1] for x in extra])
    zs = ", ".join(f"z{j}" for j in range(nz))
    return (f'extern "C" __global__ void ptxmm_audit_{rl.k}({params}) {{\n'
            f"    const u32 zz[{nz}] = {{{zs}}};\n    u64 o[{n_out}] = {{0}};\n    u32 d = 0;\n"
            f"    ptxmm_role_{rl.k}({args});\n"
            f'    asm volatile("nanosleep.u32 0;" ::: "memory");  // audit marker\n'
            f"    for (int j = 0; j < {n_out}; j++) out[j] = o[j];\n    *dnf = d;\n}}\n")

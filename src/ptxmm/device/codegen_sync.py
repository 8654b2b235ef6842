"""CUDA for a test's synchronization (sync.py has the plan): CTA barriers on per-group hardware
barriers, ``barrier.cluster``, mbarrier operations (the CTA's own, and arrive-type operations on
another CTA's through ``mapa``), ``mapa``, bulk copies (multicast and reductions too) and their
groups, Ampere ``cp.async`` and its groups, ``st.async``/``red.async``, ``elect.sync``,
``%cluster_ctarank``, ``fence.proxy.async``, and the litmus kernel's step schedule. Every test
instruction stays one ``asm volatile`` statement with the qualifiers as written, with these changes
the hardware forces:

* ``bar.sync a{, b}`` / ``barrier.sync`` / ``bar.arrive`` become ``barrier.sync|arrive id, 32*n``
  on the instance group's own hardware barrier (sync.py), without ``.aligned`` (same ordering;
  never undefined when a warp has diverged); ``barrier.cluster.*`` likewise without ``.aligned``;
* a bulk copy moves 16 bytes (the hardware's minimum; each location involved has its own aligned
  16-byte chunk), so its size and every tx-count operand are scaled by 4, and an ``st.async``
  beside it stores 16 bytes (``.v4``, the word four times) to complete as many;
* an mbarrier arrive on the CTA's own object whose state is ``_`` writes a scratch register;
* CTA ranks are the test's: the harness rotates which hardware rank plays which test rank
  (``ri``), so a ``mapa`` rank r becomes hardware rank ``(RI + r) % CS``, a multicast ctaMask is
  rotated likewise, and ``%cluster_ctarank`` reads the hardware rank and turns it back;
* a tensor copy (``cp.async.bulk.tensor.1d|.2d``, tensor.py) gains a dimension: ``.1d`` runs as
  ``.2d`` and ``.2d`` as ``.3d``, the new outermost coordinate being the instance's row of the
  tensor region (``TQ_``: every instance has its own contiguous copy of the array, placed by the
  permutation of the array's first element); coordinate 0 is scaled by 4 (a model word is 4
  .b32 elements, one 16-byte chunk, as for bulk copies; the map's dims and box likewise), and the
  map is the kernel's ``const __grid_constant__ CUtensorMap`` parameter (``TM_`` its address),
  encoded once per launch configuration on the host (harness.py); the box's shared array is one
  row of chunks per (region, lane), padded to 128 bytes, after the plain locations
  (Layout.shared_word), and the dynamic shared memory base is rounded up to 128 bytes.

Shared memory: every block holds, per location, one region per (cluster group, ``ri``): the
instance a cluster's blocks play in one step has the same region in every block, so a location
has the same CTA-relative offset in every CTA of the instance, as multicast copies and ``mapa``
need (``region``)."""

from __future__ import annotations

import re

from ..ir.program import (
    AsyncStore,
    Barrier,
    BulkCopy,
    BulkGroup,
    ClusterBarrier,
    CpAsync,
    CpAsyncGroup,
    Elect,
    Imm,
    Mapa,
    MBarrier,
    ProxyFence,
    Reg,
    Sym,
    TensorCopy,
)
from .sync import BULK_BYTES, COPIES, CTARANK, reads_ctarank


def mnemonic(text: str) -> str:
    """The opcode with its qualifiers, as the test wrote it (guard and operands dropped)."""
    words = text.strip().rstrip(";").split()
    return words[1] if words[0].startswith("@") else words[0]


def region(cg: int) -> str:
    """The shared-memory region of the instance a block plays (cluster group cg, its ``ri``)."""
    return f"({cg}U * CS + ri)"


def _shared_addr(role, name: str) -> str:
    return f"(u32)__cvta_generic_to_shared(A_{_ident(name)})"


def _ident(name: str) -> str:
    return re.sub(r"\W", "_", name.lstrip("%"))


def _cluster_operand(role, a) -> tuple[str, str]:
    """(constraint, expression) of a shared operand: a location by name (a shared::cta address,
    which the shared::cluster window holds too) or a register mapa.shared::cluster wrote."""
    if isinstance(a.base, Sym):
        return "r", _shared_addr(role, a.base.name)
    if role.cluster_regs[a.base.name] == 64:
        return "l", role.r(a.base.name)
    return "r", f"(u32){role.r(a.base.name)}"


def _mbar_addr(role, ins: MBarrier, mn: str) -> tuple[str, str]:
    if isinstance(ins.addr.base, Reg):
        return _cluster_operand(role, ins.addr)
    if ".shared" in mn:
        return "r", _shared_addr(role, ins.addr.base.name)
    return "l", f"(u64)A_{_ident(ins.addr.base.name)}"


def barrier(role, ins: Barrier) -> list[str]:
    use = role.lay.sync.bars[(role.k, role.idx)]
    op = "sync" if use.sync else "arrive"
    out = [f'asm volatile("barrier.{op} %0, %1;" :: "r"(hb + {use.u}U), "r"({use.threads}U) '
           ': "memory");']
    if use.rescue_at >= 0:  # a quorum barrier: was this warp released by the pad's rescue?
        mark = "*dnf = 1U;" if use.dnf_after else "(void)dnf;"
        out.append(f"if (atomicAdd(psd + hb + {use.u}U, 1U) >= {use.rescue_at}U) {{ {mark} }}")
    return out


def cluster_barrier(role, ins: ClusterBarrier) -> list[str]:
    op = f"arrive.{ins.sem}" if ins.kind == "arrive" else "wait.acquire"
    return [f'asm volatile("barrier.cluster.{op};" ::: "memory");']


def _tx(role, ins) -> str:
    return f"{ins.tx.value * role.lay.sync.tx_scale}U"


def mbarrier(role, ins: MBarrier) -> list[str]:
    mn = mnemonic(ins.text)
    c, a = _mbar_addr(role, ins, mn)
    if ins.op == "init":
        return [f'asm volatile("{mn} [%0], %1;" :: "{c}"({a}), "r"({role.val(ins.count, False)}) '
                ': "memory");']
    if ins.op == "inval":
        return [f'asm volatile("{mn} [%0];" :: "{c}"({a}) : "memory");']
    if ins.op in ("expect_tx", "complete_tx"):
        return [f'asm volatile("{mn} [%0], %1;" :: "{c}"({a}), "r"({_tx(role, ins)}) : "memory");']
    if ins.op in ("arrive", "arrive_drop"):
        return _arrive(role, ins, mn, c, a)
    # test_wait / try_wait: the predicate as 0/1
    if ins.parity:
        st = f'"r"({role.val(ins.state, False)})'
    else:
        st = f'"l"({role.val(ins.state, True)})'
    return [f'{{ u32 d; asm volatile("{{ .reg .pred q; {mn} q, [%1], %2; selp.u32 %0, 1, 0, q; }}" '
            f': "=r"(d) : "{c}"({a}), {st} : "memory"); {role.r(ins.dst.name)} = d; }}']


def _arrive(role, ins: MBarrier, mn: str, c: str, a: str) -> list[str]:
    extra = ""
    if ins.tx is not None:
        extra = f', "r"({_tx(role, ins)})'
    elif ins.count is not None:
        extra = f', "r"({role.val(ins.count, False)})'
    if "shared::cluster" in mn:  # another CTA's object: the ISA's form has no state (`_`)
        ops = "_, [%0], %1" if extra else "_, [%0]"
        return [f'asm volatile("{mn} {ops};" :: "{c}"({a}){extra} : "memory");']
    ops = "%0, [%1], %2" if extra else "%0, [%1]"
    keep = f" {role.r(ins.dst.name)} = st;" if ins.dst is not None else ""
    return [f'{{ u64 st; asm volatile("{mn} {ops};" : "=l"(st) : "{c}"({a}){extra} : "memory");'
            f"{keep} (void)st; }}"]


def _hw_rank(role, rank) -> str:
    """The hardware rank of test rank ``rank`` (a constant or a register) for this instance."""
    r = f"{rank.value}U" if isinstance(rank, Imm) else f"(u32){role.r(rank.name)}"
    return f"((RI + {r}) % CS)"


def mapa(role, ins: Mapa) -> list[str]:
    """The location's own slot (same offset in every CTA of the instance) mapped to the CTA that
    plays test rank ``rank``."""
    mn = mnemonic(ins.text)
    p = f"__cvta_generic_to_shared(A_{_ident(ins.src.name)})"
    w, c = ("u64", "l") if ins.type.endswith("64") else ("u32", "r")
    return [f'{{ {w} d; asm volatile("{mn} %0, %1, %2;" : "={c}"(d) : "{c}"(({w}){p}), '
            f'"r"({_hw_rank(role, ins.rank)})); {role.r(ins.dst.name)} = d; }}']


def _hw_mask(mask: int) -> str:
    """A ctaMask of test ranks as hardware ranks: rotated left by RI within CS bits."""
    return f"(unsigned short)((({mask}U << RI) | ({mask}U >> (CS - RI))) & ((1U << CS) - 1U))"


def bulk_copy(role, ins: BulkCopy) -> list[str]:
    mn = mnemonic(ins.text)
    dst, src = ins.dst.base.name, ins.src.base.name
    if ins.mbar is not None:  # global -> shared, complete-tx on the mbarrier
        ops = "[%0], [%1], %2, [%3]"
        args = (f'"r"({_shared_addr(role, dst)}), "l"(A_{_ident(src)}), "r"({BULK_BYTES}U), '
                f'"r"({_shared_addr(role, ins.mbar.base.name)})')
        if ins.multicast is not None:  # every CTA of the mask: same offsets (region)
            ops += ", %4"
            args += f', "h"({_hw_mask(ins.multicast.value)})'
        return [f'asm volatile("{mn} {ops};" :: {args} : "memory");']
    # shared -> global: a copy, or (cp.reduce.async.bulk, the op as written) a reduction
    return [f'asm volatile("{mn} [%0], [%1], %2;" :: "l"(A_{_ident(dst)}), '
            f'"r"({_shared_addr(role, src)}), "r"({BULK_BYTES}U) : "memory");']


def _coord(role, c, scale: int) -> str:
    """A tensor coordinate (signed 32-bit) times ``scale``: dimension 0 counts .b32 elements on
    the device, 4 per model word."""
    if isinstance(c, Imm):
        return f"{(scale * c.value) & 0xffffffff}U"
    return f"({scale}U * (u32){role.r(c.name)})"


def tensor_copy(role, ins: TensorCopy) -> list[str]:
    """cp.async.bulk.tensor as written, one dimension more: the instance's row of the tensor
    region (``TQ_``, the map's outermost dimension), dimension 0 scaled to .b32 elements (4 per
    model word); the map is the kernel's __grid_constant__ parameter (``TM_``, its address);
    a multicast ctaMask rotated as for bulk copies (tensor.py)."""
    mn = mnemonic(ins.text).replace(f".{ins.dims}d.", f".{ins.dims + 1}d.", 1)
    m = _ident(ins.tmap.base.name)
    coords = [_coord(role, c, 4 if k == 0 else 1) for k, c in enumerate(ins.coords)] + [f"TQ_{m}"]
    smem = f'"r"({_shared_addr(role, ins.smem.base.name)})'
    tmap = f'"l"((u64)TM_{m})'
    crd = [f'"r"({c})' for c in coords]
    if ins.load:
        n = 2 + len(coords)
        box = ", ".join(f"%{2 + k}" for k in range(len(coords)))
        ops = f"[%0], [%1, {{{box}}}], [%{n}]"
        args = [smem, tmap, *crd, f'"r"({_shared_addr(role, ins.mbar.base.name)})']
        if ins.multicast is not None:  # every CTA of the mask: same offsets (region)
            ops += f", %{n + 1}"
            args.append(f'"h"({_hw_mask(ins.multicast.value)})')
    else:  # shared::cta -> global, bulk async-group
        box = ", ".join(f"%{1 + k}" for k in range(len(coords)))
        ops = f"[%0, {{{box}}}], [%{1 + len(coords)}]"
        args = [tmap, *crd, smem]
    return [f'asm volatile("{mn} {ops};" :: {", ".join(args)} : "memory");']


def bulk_group(role, ins: BulkGroup) -> list[str]:
    return [f'asm volatile("{mnemonic(ins.text)}{f" {ins.n}" if ins.kind == "wait" else ""};" ::: '
            '"memory");']


def cp_async(role, ins: CpAsync) -> list[str]:
    """Ampere cp.async of one word: the hardware copies 4 bytes (cp-size 4) as written."""
    return [f'asm volatile("{mnemonic(ins.text)} [%0], [%1], 4;" :: '
            f'"r"({_shared_addr(role, ins.dst.base.name)}), "l"(A_{_ident(ins.src.base.name)}) '
            ': "memory");']


def cp_async_group(role, ins: CpAsyncGroup) -> list[str]:
    mn = mnemonic(ins.text)
    if ins.kind == "arrive":
        return [f'asm volatile("{mn} [%0];" :: "r"({_shared_addr(role, ins.mbar.base.name)}) '
                ': "memory");']
    return [f'asm volatile("{mn}{f" {ins.n}" if ins.kind == "wait" else ""};" ::: "memory");']


def async_store(role, ins: AsyncStore) -> list[str]:
    """st.async / red.async into the shared memory of a CTA of the cluster, complete-tx on its
    mbarrier. Beside bulk copies (tx-counts ×4) st.async stores 16 bytes: ``.v4``, the word
    four times, into the location's 16-byte chunk."""
    mn = mnemonic(ins.text)
    ca, a = _cluster_operand(role, ins.addr)
    cm, m = _cluster_operand(role, ins.mbar)
    v = "{%1, %1, %1, %1}" if role.lay.sync.tx_scale > 1 else "%1"
    if role.lay.sync.tx_scale > 1:
        head, _, ty = mn.rpartition(".")
        mn = f"{head}.v4.{ty}"
    return [f'asm volatile("{mn} [%0], {v}, [%2];" :: "{ca}"({a}), '
            f'"r"({role.val(ins.src, False)}), "{cm}"({m}) : "memory");']


def elect(role, ins: Elect) -> list[str]:
    """elect.sync over the warp that plays the thread: one lane (one instance of 32) is elected."""
    return [f'{{ u32 d; asm volatile("{{ .reg .pred q; elect.sync _|q, %1; selp.u32 %0, 1, 0, q; }}" '
            f': "=r"(d) : "r"({role.val(ins.mask, False)}) : "memory"); {role.r(ins.dst.name)} = d; }}']


def proxy_fence(role, ins: ProxyFence) -> list[str]:
    return [f'asm volatile("{mnemonic(ins.text)};" ::: "memory");']


EMIT = {Barrier: barrier, ClusterBarrier: cluster_barrier, MBarrier: mbarrier, Mapa: mapa,
        BulkCopy: bulk_copy, BulkGroup: bulk_group, ProxyFence: proxy_fence, CpAsync: cp_async,
        CpAsyncGroup: cp_async_group, AsyncStore: async_store, Elect: elect,
        TensorCopy: tensor_copy}

# %cluster_ctarank: the hardware rank, turned back into the test rank this block plays
CTARANK_LINE = ('{ u32 d; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(d)); '
                f"R_{_ident(CTARANK)} = (d + CS - RI) % CS; }}")


def _addrs(ins) -> list:
    if isinstance(ins, MBarrier):
        return [ins.addr]
    if isinstance(ins, BulkCopy):
        return [ins.dst, ins.src] + ([ins.mbar] if ins.mbar is not None else [])
    if isinstance(ins, TensorCopy):  # the map is a kernel parameter, not a location slot
        return [ins.smem] + ([ins.mbar] if ins.mbar is not None else [])
    if isinstance(ins, CpAsync):
        return [ins.dst, ins.src]
    if isinstance(ins, (CpAsyncGroup, AsyncStore)):
        return [a for a in (getattr(ins, "addr", None), ins.mbar) if a is not None]
    return []


def scan(role, ins) -> None:
    """Registers and parameters a Hopper instruction needs (beside codegen._Role.scan)."""
    if isinstance(ins, Mapa):
        wide = ins.type.endswith("64")
        role.regs[ins.dst.name] = role.regs.get(ins.dst.name, False) or wide
        role.cluster_regs[ins.dst.name] = 64 if wide else 32
        key = (ins.src.name, ins.rank.value if isinstance(ins.rank, Imm) else ins.rank.name)
        if key not in role.mapas:
            role.mapas.append(key)
    elif isinstance(ins, TensorCopy) and ins.tmap.base.name not in role.tmaps:
        role.tmaps.append(ins.tmap.base.name)
    elif isinstance(ins, (MBarrier, Elect)) and ins.dst is not None:
        wide = isinstance(ins, MBarrier) and ins.op not in ("test_wait", "try_wait")
        role.regs[ins.dst.name] = role.regs.get(ins.dst.name, False) or wide
    for a in _addrs(ins):
        if isinstance(a.base, Sym) and a.base.name not in role.locs:
            role.locs.append(a.base.name)
    for o in (getattr(ins, "state", None), getattr(ins, "count", None)):
        if isinstance(o, Reg):
            role.regs.setdefault(o.name, False)
    if reads_ctarank(ins) and CTARANK_LINE not in role.lines:
        role.lines.insert(0, CTARANK_LINE)


def cluster_addr(role, a, z: str) -> tuple[str, str] | None:
    """A ``.shared::cluster`` access through a mapa register: the address as mapa gave it."""
    if isinstance(a.base, Reg) and a.base.name in role.cluster_regs:
        if role.cluster_regs[a.base.name] == 64:
            return "l", f"({role.r(a.base.name)} + 4ULL * {z})"
        return "r", f"((u32){role.r(a.base.name)} + 4U * {z})"
    return None


def _needs_ri(t) -> bool:
    """Whether a role translates CTA ranks (mapa, multicast, %cluster_ctarank)."""
    return any(isinstance(i, Mapa) or isinstance(i, COPIES) and i.multicast is not None
               or reads_ctarank(i) for i in t.instrs)


def role_params(role) -> list[str]:
    """Extra parameters of a role function in a synchronized test."""
    out = []
    if role.lay.sync is None:
        return out
    if role.lay.sync.bar_ids:
        out += ["u32 hb", "u32* psd"]
    if _needs_ri(role.t):
        out.append("u32 RI")
    for m in role.tmaps:  # a tensor map's address and the instance's row in its tensor region
        out += [f"const CUtensorMap* TM_{_ident(m)}", f"u32 TQ_{_ident(m)}"]
    return out


def role_args(lay, role, rl) -> list[str]:
    """The arguments for role_params, in the litmus kernel (``ri`` from the instance snippet)."""
    out = []
    if lay.sync.bar_ids:
        out += ["hb", "ptxmm_passed"]
    if _needs_ri(rl.t):
        out.append("ri")
    for m in rl.tmaps:
        arr = lay.tensor.array(lay.tensor.map(m).array)
        out += [f"&TMAP_{_ident(m)}", f"ptxmm_tq(p, {arr.perm_slot}, i, n)"]
    return out


def tensor_prelude(lay) -> str:
    """Declarations for tensor copies (after ``ptxmm_slot``): CUtensorMap from cuda.h, the
    instance's row in the tensor region (the permutation of the array's first element) and the
    word of an element there (tensor.py)."""
    if lay.tensor is None:
        return ""
    return """
// tensor copies (tensor.py): instance i's row of a tensor array sits at slot q = ptxmm_tq(...)
// of its region, after the n * LG * stride words of the location slots
__device__ __forceinline__ u32 ptxmm_tq(const Params* p, u32 m, u32 i, u32 n) {
    return (i * p->pm[m] + p->om[m]) & (n - 1U);
}
__device__ __forceinline__ u64 ptxmm_tword(const Params* p, u32 m, u32 i, u32 n, u32 stride,
                                           u32 off, u32 words, u32 w) {
    return (u64)n * LG * stride + (u64)n * off + (u64)ptxmm_tq(p, m, i, n) * words + w;
}
"""


def tensor_params(lay) -> str:
    """The litmus kernel's tensor map parameters (last): one CUtensorMap each, passed by value
    as a grid constant (tensor.kernel_arg), so copies use its parameter-space address."""
    if lay.tensor is None:
        return ""
    return "".join(f", const __grid_constant__ CUtensorMap TMAP_{_ident(m.name)}"
                   for m in lay.tensor.maps)


def _cluster_pad(k: int) -> str:
    return "".join('asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory"); '
                   'asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); ' for _ in range(k))


def step_loop(lay, cases: list[tuple[int, str]], chunk_mul: str) -> str:
    """The litmus kernel's body for a synchronized test: the step schedule of sync.py.
    ``cases``: (slot, code) of every role."""
    sp = lay.sync
    bars = bool(sp.bar_ids)
    pad = _cluster_pad(sp.cluster_phases)
    by_cta = {}
    for r in lay.roles:
        by_cta.setdefault((r.cg, r.rank), []).append(r)
    # cp.async: the thread waits for its copies after its role (nothing of the test follows), so
    # none lands after the step, in a region another instance's role reads (final values)
    tail = ('\n                asm volatile("cp.async.wait_all;" ::: "memory");'
            if any(isinstance(i, CpAsync) for t in lay.program.threads for i in t.instrs) else "")
    body = [f"            case {slot}: {{\n{code}{tail}\n                break;\n            }}"
            for slot, code in cases]
    for rs in sp.rescues:
        n_roles = len(by_cta[(rs.cg, rs.rank)])
        for p in range(rs.pads):
            slot = (rs.cg * lay.cluster_size + rs.rank) * sp.mw + n_roles + p
            body.append(f"""            case {slot}: {{  // pad warp: rescue a quorum barrier's waiters
                u32 k = 0;
                while (*(volatile u32*)&ptxmm_passed[hb + {rs.u}U] < {rs.wait_for}U && ++k < (1U << 24)) {{ }}
                asm volatile("barrier.arrive %0, %1;" :: "r"(hb + {rs.u}U), "r"({rs.threads}U) : "memory");
                {pad}break;
            }}""")
    body.append(f"            default: {{ {pad}break; }}  // pad warp")
    reset = ("        if (lane < 16U) ptxmm_passed[lane] = 0U;\n        __syncthreads();\n"
             if bars else "")
    end = "        __syncthreads();\n" if bars else ""
    hb = ("        const u32 hb = 1U + (((warp + W - wk) & (W - 1U)) / MW) * NBARIDS;\n"
          if bars else "")
    return f"""    const u32 W = bsz >> 5;
    u32 rep = 0;
    // step (jg, jr, jw): this warp plays slot (cluster group jg, rank (jr + rho) % CS, warp
    // (jw + warp) % MW), so all roles of one instance in one cluster run in the same step
    for (rep = 0; rep < reps; rep++) for (u32 jg = 0; jg < NGROUPS; jg++)
    for (u32 jr = 0; jr < CS; jr++) for (u32 jw = 0; jw < MW; jw++) {{
{reset}        const u32 rk = (jr + rho) % CS, wk = (jw + warp) % MW;
{hb}        (void)W;
        switch ((jg * CS + rk) * MW + wk) {{
{chr(10).join(body)}
        }}
{end}    }}
{_settle(lay)}"""


def prologue(lay, chunk_mul: str) -> str:
    """Shared memory set-up of a synchronized test: data words, mbarrier objects (initialised by
    the harness, then fence.mbarrier_init), and a cluster-wide barrier before DSMEM accesses."""
    lines = []
    inits = [f"sh[{lay.shared_word(name, 'g', 'threadIdx.x')}] = {lay.init[name] & 0xffffffff}U;"
             for name in lay.shared]
    for m, name in enumerate(lay.mbars):
        word = lay.init[name]
        addr = f"(u32)__cvta_generic_to_shared(mb + ({m} * NREG + g) * bsz + threadIdx.x)"
        if word:
            inits.append(f'asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"({addr}), '
                         f'"r"({word & 0xffff}U) : "memory");')
        else:
            inits.append(f"mb[({m} * NREG + g) * bsz + threadIdx.x] = 0ULL;")
    if inits:
        lines.append("    for (u32 g = 0; g < NREG; g++) { " + " ".join(inits) + " }")
    if lay.mbars:
        lines.append('    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");')
    if lay.tensor is not None:  # the initial words, as the model has them, for the async proxy too
        lines.append('    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  '
                     '// the harness\'s own writes, before the test (tensor.py)')
    lines.append("    __syncthreads();")
    if lay.sync.dsmem or lay.sync.cluster_phases:
        lines.append('    asm volatile("barrier.cluster.arrive.release;" ::: "memory"); '
                     'asm volatile("barrier.cluster.wait.acquire;" ::: "memory");')
    return "\n".join(lines) + "\n"


def _settle(lay) -> str:
    """After the steps, before the final values are read: asynchronous writes into shared memory
    that nobody waits for (a broken test's bulk copy, st.async or red.async) get a few
    microseconds to land, and with DSMEM or multicast no CTA of the cluster goes on (reads final
    values, exits) while a peer may still access its shared memory."""
    out = ""
    if any(isinstance(i, COPIES) and i.mbar is not None or isinstance(i, AsyncStore)
           for t in lay.program.threads for i in t.instrs):
        out += "    __nanosleep(4000);\n"
    if lay.sync.dsmem:
        out += ('    asm volatile("barrier.cluster.arrive.release;" ::: "memory"); '
                'asm volatile("barrier.cluster.wait.acquire;" ::: "memory");\n')
    return out


__all__ = ["EMIT", "scan", "cluster_addr", "role_params", "role_args", "step_loop",
           "prologue", "mnemonic", "region", "tensor_prelude", "tensor_params"]

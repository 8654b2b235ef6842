"""CUDA for a test's synchronization (sync.py has the plan): CTA barriers on per-group hardware
barriers, ``barrier.cluster``, mbarrier operations, ``mapa``, bulk copies and their groups,
``fence.proxy.async``, and the litmus kernel's step schedule. Every test instruction stays one
``asm volatile`` statement with the qualifiers as written, with these changes the hardware forces:

* ``bar.sync a{, b}`` / ``barrier.sync`` / ``bar.arrive`` become ``barrier.sync|arrive id, 32*n``
  on the instance group's own hardware barrier (sync.py), without ``.aligned`` (same ordering;
  never undefined when a warp has diverged); ``barrier.cluster.*`` likewise without ``.aligned``;
* a bulk copy moves 16 bytes (the hardware's minimum; each location involved has its own aligned
  16-byte chunk), so its size and every tx-count operand are scaled by 4;
* an mbarrier arrive whose state is ``_`` writes a scratch register."""

from __future__ import annotations

import re

from ..program import (
    Barrier,
    BulkCopy,
    BulkGroup,
    ClusterBarrier,
    Mapa,
    MBarrier,
    ProxyFence,
    Reg,
    Sym,
)
from .sync import BULK_BYTES, TX_SCALE


def mnemonic(text: str) -> str:
    """The opcode with its qualifiers, as the test wrote it (guard and operands dropped)."""
    words = text.strip().rstrip(";").split()
    return words[1] if words[0].startswith("@") else words[0]


def _shared_addr(role, name: str) -> str:
    return f"(u32)__cvta_generic_to_shared(A_{_ident(name)})"


def _ident(name: str) -> str:
    return re.sub(r"\W", "_", name.lstrip("%"))


def _mbar_addr(role, ins: MBarrier, mn: str) -> tuple[str, str]:
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


def mbarrier(role, ins: MBarrier) -> list[str]:
    mn = mnemonic(ins.text)
    c, a = _mbar_addr(role, ins, mn)
    if ins.op == "init":
        return [f'asm volatile("{mn} [%0], %1;" :: "{c}"({a}), "r"({role.val(ins.count, False)}) '
                ': "memory");']
    if ins.op in ("expect_tx", "complete_tx"):
        return [f'asm volatile("{mn} [%0], %1;" :: "{c}"({a}), "r"({ins.tx.value * TX_SCALE}U) '
                ': "memory");']
    if ins.op in ("arrive", "arrive_drop"):
        extra = ""
        if ins.tx is not None:
            extra = f', "r"({ins.tx.value * TX_SCALE}U)'
        elif ins.count is not None:
            extra = f', "r"({role.val(ins.count, False)})'
        ops = "%0, [%1], %2" if extra else "%0, [%1]"
        keep = f" {role.r(ins.dst.name)} = st;" if ins.dst is not None else ""
        return [f'{{ u64 st; asm volatile("{mn} {ops};" : "=l"(st) : "{c}"({a}){extra} : "memory");'
                f"{keep} (void)st; }}"]
    # test_wait / try_wait: the predicate as 0/1
    if ins.parity:
        st = f'"r"({role.val(ins.state, False)})'
    else:
        st = f'"l"({role.val(ins.state, True)})'
    return [f'{{ u32 d; asm volatile("{{ .reg .pred q; {mn} q, [%1], %2; selp.u32 %0, 1, 0, q; }}" '
            f': "=r"(d) : "{c}"({a}), {st} : "memory"); {role.r(ins.dst.name)} = d; }}']


def mapa(role, ins: Mapa) -> list[str]:
    mn = mnemonic(ins.text)
    rank = ins.rank.value
    p = f"P_{_ident(ins.src.name)}_{rank}"
    if ins.type.endswith("64"):
        return [f'{{ u64 d; asm volatile("{mn} %0, %1, %2;" : "=l"(d) : '
                f'"l"((u64)__cvta_generic_to_shared({p})), "r"(H_{rank})); {role.r(ins.dst.name)} = d; }}']
    return [f'{{ u32 d; asm volatile("{mn} %0, %1, %2;" : "=r"(d) : '
            f'"r"((u32)__cvta_generic_to_shared({p})), "r"(H_{rank})); {role.r(ins.dst.name)} = d; }}']


def bulk_copy(role, ins: BulkCopy) -> list[str]:
    mn = mnemonic(ins.text)
    dst, src = ins.dst.base.name, ins.src.base.name
    if ins.mbar is not None:  # global -> shared, complete-tx on the mbarrier
        return [f'asm volatile("{mn} [%0], [%1], %2, [%3];" :: "r"({_shared_addr(role, dst)}), '
                f'"l"(A_{_ident(src)}), "r"({BULK_BYTES}U), "r"({_shared_addr(role, ins.mbar.base.name)}) '
                ': "memory");']
    return [f'asm volatile("{mn} [%0], [%1], %2;" :: "l"(A_{_ident(dst)}), '
            f'"r"({_shared_addr(role, src)}), "r"({BULK_BYTES}U) : "memory");']


def bulk_group(role, ins: BulkGroup) -> list[str]:
    return [f'asm volatile("{mnemonic(ins.text)}{f" {ins.n}" if ins.kind == "wait" else ""};" ::: '
            '"memory");']


def proxy_fence(role, ins: ProxyFence) -> list[str]:
    return [f'asm volatile("{mnemonic(ins.text)};" ::: "memory");']


EMIT = {Barrier: barrier, ClusterBarrier: cluster_barrier, MBarrier: mbarrier, Mapa: mapa,
        BulkCopy: bulk_copy, BulkGroup: bulk_group, ProxyFence: proxy_fence}


def scan(role, ins) -> None:
    """Registers and parameters a Hopper instruction needs (beside codegen._Role.scan)."""
    if isinstance(ins, Mapa):
        wide = ins.type.endswith("64")
        role.regs[ins.dst.name] = role.regs.get(ins.dst.name, False) or wide
        role.cluster_regs[ins.dst.name] = 64 if wide else 32
        key = (ins.src.name, ins.rank.value)
        if key not in role.mapas:
            role.mapas.append(key)
    elif isinstance(ins, MBarrier) and ins.dst is not None:
        wide = ins.op not in ("test_wait", "try_wait")
        role.regs[ins.dst.name] = role.regs.get(ins.dst.name, False) or wide
    addrs = []
    if isinstance(ins, MBarrier):
        addrs = [ins.addr]
    elif isinstance(ins, BulkCopy):
        addrs = [ins.dst, ins.src] + ([ins.mbar] if ins.mbar is not None else [])
    for a in addrs:
        if isinstance(a.base, Sym) and a.base.name not in role.locs:
            role.locs.append(a.base.name)
    for o in (getattr(ins, "state", None), getattr(ins, "count", None)):
        if isinstance(o, Reg):
            role.regs.setdefault(o.name, False)


def cluster_addr(role, a, z: str) -> tuple[str, str] | None:
    """A ``.shared::cluster`` access through a mapa register: the address as mapa gave it."""
    if isinstance(a.base, Reg) and a.base.name in role.cluster_regs:
        if role.cluster_regs[a.base.name] == 64:
            return "l", f"({role.r(a.base.name)} + 4ULL * {z})"
        return "r", f"((u32){role.r(a.base.name)} + 4U * {z})"
    return None


def role_params(role) -> list[str]:
    """Extra parameters of a role function in a synchronized test."""
    out = []
    if role.lay.sync is None:
        return out
    if role.lay.sync.bar_ids:
        out += ["u32 hb", "u32* psd"]
    for name, rank in role.mapas:
        out.append(f"u32* P_{_ident(name)}_{rank}")
    for rank in sorted({r for _, r in role.mapas}):
        out.append(f"u32 H_{rank}")
    return out


def role_args(lay, role, rl, cta_of, shared_slot) -> list[str]:
    """The arguments for role_params, in the litmus kernel (``ri`` from the instance snippet)."""
    out = []
    if lay.sync.bar_ids:
        out += ["hb", "ptxmm_passed"]
    ranks = {r.rank: (r.cg, r.rank) for r in lay.roles if r.cg == role.cg}
    for name, rank in rl.mapas:
        if rank not in ranks:
            from .sync import _unsupported

            _unsupported(f"mapa to rank {rank}", "the cluster has no CTA of that rank")
        out.append(shared_slot(name, cta_of[ranks[rank]]))
    for rank in sorted({r for _, r in rl.mapas}):
        out.append(f"(ri + {rank}U) % CS")
    return out


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
    body = [f"            case {slot}: {{\n{code}\n                break;\n            }}"
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
"""


def prologue(lay, chunk_mul: str) -> str:
    """Shared memory set-up of a synchronized test: data words, mbarrier objects (initialised by
    the harness, then fence.mbarrier_init), and a cluster-wide barrier before DSMEM accesses."""
    lines = []
    inits = [f"sh[(({s} * NCTA + g) * bsz + threadIdx.x){chunk_mul}] = {lay.init[name] & 0xffffffff}U;"
             for s, name in enumerate(lay.shared)]
    for m, name in enumerate(lay.mbars):
        word = lay.init[name]
        addr = f"(u32)__cvta_generic_to_shared(mb + ({m} * NCTA + g) * bsz + threadIdx.x)"
        if word:
            inits.append(f'asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"({addr}), '
                         f'"r"({word & 0xffff}U) : "memory");')
        else:
            inits.append(f"mb[({m} * NCTA + g) * bsz + threadIdx.x] = 0ULL;")
    if inits:
        lines.append("    for (u32 g = 0; g < NCTA; g++) { " + " ".join(inits) + " }")
    if lay.mbars:
        lines.append('    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");')
    lines.append("    __syncthreads();")
    if lay.sync.dsmem or lay.sync.cluster_phases:
        lines.append('    asm volatile("barrier.cluster.arrive.release;" ::: "memory"); '
                     'asm volatile("barrier.cluster.wait.acquire;" ::: "memory");')
    return "\n".join(lines) + "\n"


def epilogue(lay) -> str:
    """DSMEM: no CTA of the cluster exits while a peer may still access its shared memory. Bulk
    copies into shared memory whose mbarrier phase nobody waits for (a broken test's) get a few
    microseconds to land before the block exits."""
    out = ""
    if any(isinstance(i, BulkCopy) and i.mbar is not None for t in lay.program.threads
           for i in t.instrs):
        out += "    __nanosleep(4000);\n"
    if lay.sync.dsmem:
        out += ('    asm volatile("barrier.cluster.arrive.release;" ::: "memory"); '
                'asm volatile("barrier.cluster.wait.acquire;" ::: "memory");\n')
    return out


__all__ = ["EMIT", "scan", "cluster_addr", "role_params", "role_args", "step_loop",
           "prologue", "epilogue", "mnemonic"]

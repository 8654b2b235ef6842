"""Litmus programs that several test folders use, written once.

``LAST_BLOCK_RESET``: two blocks each run ``t = atomicAdd(c, 1); if (t == 1) *c = 0;`` — the
"last block resets the counter" step of last-block reductions (issue 37: no race, an atom is one
operation). ``ROTATED_WAIT``: a flag wait laid out as nvcc -O3 rotates it, the test at the bottom
and the load in the block the back edge reaches (issue 37: the loop is found on the control-flow
graph). ``TWO_RACING_PATHS``: T1 takes one of two paths depending on the flag it reads; each path
races with a different store of T0, so the two races need two witnesses (no condition: each test
adds its own)."""

from __future__ import annotations

TWO_RACING_PATHS = """
.global .u32 x = 0;
.global .u32 y = 0;
.global .u32 f = 0;
.thread T0 .cta 0 {
    st.global.u32 [x], 1;
    st.global.u32 [y], 1;
    st.relaxed.gpu.global.u32 [f], 1;
}
.thread T1 .cta 1 {
    ld.relaxed.gpu.global.u32 %r0, [f];
    setp.eq.u32 %p0, %r0, 1;
    @%p0 bra $L_y;
    ld.global.u32 %r1, [x];
    bra $L_end;
$L_y:
    ld.global.u32 %r1, [y];
$L_end:
    ret;
}
"""


def _last_block(t: int) -> str:
    return (f".thread T{t} .cta {t} {{\n"
            "    atom.relaxed.gpu.global.add.u32 %r0, [c], 1;\n"
            "    setp.eq.u32 %p, %r0, 1;\n"
            "    @!%p bra END;\n"
            "    st.global.u32 [c], 0;\n"
            "END:\n"
            "}\n")


LAST_BLOCK_RESET = "\n.global .u32 c = 0;\n" + _last_block(0) + _last_block(1) + "exists (T0:%r0 == 1)\n"

ROTATED_WAIT = """.test Rotated "a wait loop laid out as nvcc -O3 rotates it: the test at the bottom"
.global .u32 flag = 0;
.thread T0 .cta 0 {
    st.release.gpu.global.u32 [flag], 1;
}
.thread T1 .cta 1 {
    bra COND;
BODY:
    nanosleep.u32 20;
COND:
    ld.acquire.gpu.global.u32 %r0, [flag];
    setp.eq.u32 %p, %r0, 0;
    @%p bra BODY;
}
exists (T1:%r0 == 1)
"""

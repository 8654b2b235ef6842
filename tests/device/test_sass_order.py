"""sass.gaps: what orders a role's consecutive memory accesses in SASS (scheduling controls decoded
from cuobjdump's second word), on text cuobjdump printed for a family variant (MP-07's reader:
ld.acquire.cta; fence.acq_rel.cta; ld.relaxed.gpu). No GPU, no cuobjdump."""

from ptxmm.device import sass

READER = """
\t\tFunction : ptxmm_audit_1
        /*0060*/                   IMAD.WIDE.U32 R2, R7, 0x4, R2 ;          /* 0x0000000407027825 */
                                                                            /* 0x001fcc00078e0002 */
        /*0070*/                   LDG.E.STRONG.SM R2, desc[UR4][R2.64] ;   /* 0x0000000402027981 */
                                                                            /* 0x0000a4000c1eb900 */
        /*0080*/                   NOP ;                                    /* 0x0000000000007918 */
                                                                            /* {nop} */
        /*00a0*/                   MEMBAR.ALL.CTA ;                         /* 0x0000000000007992 */
                                                                            /* 0x0003ec0000008000 */
        /*00c0*/                   LDG.E.STRONG.GPU R4, desc[UR4][R4.64] ;  /* 0x0000000404047981 */
                                                                            /* 0x0002a2000c1ef900 */
        /*00f0*/                   NANOSLEEP RZ ;                           /* 0x000000ff0000735d */
                                                                            /* 0x000fec0003800000 */
        /*0100*/                   STG.E desc[UR4][R6.64], RZ ;             /* 0x000000ff06007986 */
                                                                            /* 0x000fe2000c101904 */
"""


def _gaps(nop_hi: str):
    return sass.gaps(sass.parse_sass_full(READER.replace("{nop}", nop_hi))["ptxmm_audit_1"])


def test_controls_are_decoded():
    ins = sass.parse_sass_full(READER.replace("{nop}", "0x004fe20000000000"))["ptxmm_audit_1"]
    ld = ins[1]
    assert ld.op == "LDG.E.STRONG.SM" and ld.mem == "ld" and ld.sets == 2
    assert ins[2].op == "NOP" and ins[2].waits == 0b100 and ins[2].mem is None
    assert ins[0].sets is None  # IMAD: fixed latency, no scoreboard


def test_load_wait_before_a_cta_membar():
    (g,) = _gaps("0x004fe20000000000")  # the NOP waits on the acquire load's scoreboard
    assert (g.first, g.second, g.load_wait) == ("LDG.E.STRONG.SM", "LDG.E.STRONG.GPU", True)
    assert g.between == ["MEMBAR.ALL.CTA"] and g.kind == "load-wait"


def test_cta_membar_alone_and_gpu_membar():
    (g,) = _gaps("0x000fe20000000000")  # nothing waits: only MEMBAR.CTA between
    assert not g.load_wait and g.kind == "membar.cta"
    text = READER.replace("{nop}", "0x000fe20000000000").replace("MEMBAR.ALL.CTA", "MEMBAR.SC.GPU")
    (g,) = sass.gaps(sass.parse_sass_full(text)["ptxmm_audit_1"])
    assert g.kind == "membar.gpu"  # the accesses after the marker (STG) are not the test's


PADDED = """
\t\tFunction : ptxmm_litmus
        /*1af0*/                   LD.E.STRONG.GPU R17, desc[UR6][R16.64] ;       /* 0x0000000610117980 */
                                                                                  /* 0x000ea200001ef900 */
        /*1b30*/              @!PT LDS RZ, [RZ] ;                                 /* 0x00000000fffff984 */
                                                                                  /* 0x000fe20000000800 */
        /*1b40*/              @!PT LDS RZ, [RZ] ;                                 /* 0x00000000fffff984 */
                                                                                  /* 0x000fe20000000800 */
        /*1b70*/                   MEMBAR.ALL.CTA ;                               /* 0x0000000000007992 */
                                                                                  /* 0x000fec0000000000 */
        /*1b80*/                   NOP ;                                          /* 0x0000000000007918 */
                                                                                  /* 0x03ffe20000000000 */
        /*1b90*/                   LD.E.STRONG.GPU R19, desc[UR6][R18.64] ;       /* 0x0000000612137980 */
                                                                                  /* 0x000ee200001ef900 */
"""


def test_never_executed_padding_is_no_access():
    ins = sass.parse_sass_full(PADDED)["ptxmm_litmus"]
    assert ins[1].never and ins[1].op == "LDS" and ins[1].mem is None and ins[0].mem == "ld"
    (g,) = sass.gaps(ins)  # the padding does not split the two loads into three accesses
    assert (g.first, g.second, g.between, g.load_wait) == ("LD.E.STRONG.GPU", "LD.E.STRONG.GPU",
                                                           ["MEMBAR.ALL.CTA"], True)
    assert sass.shape(ins) == ["LD.E.STRONG.GPU", "pad2", "MEMBAR.ALL.CTA", "LD.E.STRONG.GPU"]

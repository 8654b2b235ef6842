"""The opcodes of the PTX ISA (the instruction set chapter of PTX ISA 8.x/9.x, "Instructions"),
as the first dot-separated word of a mnemonic: ``cp`` covers cp.async, cp.async.bulk{.tensor},
cp.reduce.async.bulk; ``bar`` covers bar.sync, bar.warp.sync; ``elect`` is elect.sync; ``istypep``
(not "istypeof") is the texture/sampler/surface type test.

What ptxmm does with a mnemonic (src/ptxmm/syntax/instr.py): one it models is decoded; one in
this list it does not model is "not supported yet" (UnsupportedError); anything else is not PTX,
a syntax error with a did-you-mean from the instructions ptxmm models."""

from __future__ import annotations

PTX_OPCODES = frozenset("""
abs activemask add addc alloca and applypriority atom
bar barrier bfe bfi bfind bmsk bra brev brkpt brx
call clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt cvta
discard div dp2a dp4a elect ex2 exit fence fma fns getctarank griddepcontrol
isspacep istypep ld ldmatrix ldu lg2 lop3
mad mad24 madc mapa match max mbarrier membar min mma mov movmatrix mul mul24 multimem
nanosleep neg not or pmevent popc prefetch prefetchu prmt rcp red redux rem ret rsqrt
sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st stackrestore stacksave stmatrix
sub subc suld suq sured sust szext
tanh tcgen05 tensormap testp tex tld4 trap txq
vabsdiff vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2
vmin4 vote vset vset2 vset4 vshl vshr vsub vsub2 vsub4
wgmma wmma xor
""".split())

"""Front ends: one module per input format, each producing a :class:`ptxmm.ir.program.Program`."""

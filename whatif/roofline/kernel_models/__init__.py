"""Kernel models: one small pure function per kernel family, with its formula in its docstring.

Each model lives in its own module (gemm, prefill_attention, decode_attention, collectives, ...)
and is imported from there; this package file stays a docstring so that modules owned by
different authors do not collide here.
"""

"""Discrete-event serving simulator (SimPy): requests arrive, schedulers form iterations, a paged KV
block manager admits and preempts, and every iteration's duration comes from roofline."""

# The optional compiled hot path (whatif/accel): served only when built from these exact sources; else nothing.
from whatif.accel import finder as _accel_finder

_accel_finder.install()

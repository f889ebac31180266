"""Discrete-event serving simulator (SimPy): requests arrive, schedulers form iterations, a paged KV
block manager admits and preempts, and every iteration's duration comes from roofline."""

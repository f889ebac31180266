"""An optional compiled build of the simulator's hot path (mypyc), kept outside the source tree.

`python3 -m whatif.accel build` compiles the modules in `modules.HOT` with mypyc (the `accel` extra: mypy, and a
C compiler) into a cache folder keyed by those sources, the Python ABI and the mypy version; `finder.install()`
(called when whatif.simulator is imported) serves a compiled module only while the current sources' key matches a
built one, else the pure-Python module. `WHATIF_ACCEL=0` turns it off; `python3 -m whatif.accel status` says which
is in use and why. Outputs are the pure tree's (benchmarks/sim_outputs.py --check under both).
"""

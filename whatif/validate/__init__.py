"""Real-GPU validation: Triton kernels for the ops whatif predicts, a runner that times them on a GPU,
calibration of the efficiency model on those timings, and an accuracy report on shapes the fit did not see.

- kernels/: one module per kernel family: the Triton kernel, its torch reference, random inputs, and the
  roofline op whatif predicts for the same work (kernels/common.py: the shared helpers).
- cases.py: the shape sweep per family and its split; runner.py times it (timing.py, device.py) and writes a
  measurement table.
- The one measurement path: table.py (the schema, reader and writer), regime.py (the one regime definition),
  fit.py (the one fitter, through roofline/efficiency.py's combine), calibrate.py (fits a GPU), accuracy.py
  (the one scorer); vidur.py and reference.py bring Vidur's public timings in as rows, from a folder the caller
  names. The command line (`whatif validate`) is whatif/cli/validate.py.
- measurements/<gpu>/: committed measurement tables and the calibrations fitted on them (package data).

torch and triton are imported only here, never by the estimate path.
"""

"""Real-GPU validation: Triton kernels for the ops whatif predicts, a runner that times them on a GPU,
calibration of the efficiency model on those timings, and an accuracy report on shapes the fit did not see.

- kernels/: one module per kernel family: the Triton kernel, its torch reference, random inputs, and the
  roofline op whatif predicts for the same work (kernels/common.py: the shared helpers).
- cases.py: the shape sweep per family and its regimes; runner.py times it (timing.py, device.py) and
  writes a measurement table (table.py); calibrate.py fits; accuracy.py reports; cli.py: `whatif validate`.
- measurements/<gpu>/: committed measurement tables and the calibrations fitted on them (test data).

torch and triton are imported only here, never by the estimate path.
"""

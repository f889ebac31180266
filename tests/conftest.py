"""Test-wide settings."""
import os

# Triton kernels run on the CPU interpreter unless a GPU run asks otherwise (WHATIF_TEST_GPU=1). It must be set
# before any kernel module is imported: triton.jit reads it when it decorates.
if os.environ.get("WHATIF_TEST_GPU") != "1":
    os.environ.setdefault("TRITON_INTERPRET", "1")

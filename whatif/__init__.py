"""whatif: predict LLM inference speed and memory from specs, before renting the GPUs.

The Python API (whatif/api.py): `whatif.estimate`, `whatif.simulate`, `whatif.capacity`, `whatif.search`. They are
loaded on first use, so `import whatif` stays light (no pandas, SimPy or plotly until a call needs them)."""

__version__ = "0.1.0"

_API = ("estimate", "simulate", "capacity", "search")
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name in _API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'whatif' has no attribute {name!r}")

"""Specs: hardware, models and the units, quantities and dtypes they are written in (the data layer)."""

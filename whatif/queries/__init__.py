"""Queries built on the estimate: comparisons, tier questions, technique listings."""

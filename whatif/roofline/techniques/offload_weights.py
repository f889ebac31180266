"""Family I techniques (placeholder until written)."""

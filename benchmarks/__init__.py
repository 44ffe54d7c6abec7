"""Benchmark scripts; see benchmarks/README.md."""

"""Small gRPC server processes the benchmarks run against (loopback only, self-stopping)."""

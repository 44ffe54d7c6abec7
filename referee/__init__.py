"""The referee: pure game rules (``games``), the sans-I/O match, and the trio + gRPC runner."""

__version__ = "0.1.0"

"""The pure rules core: one package per game, all behind the interface in ``api``.

Nothing under this package may import grpc, trio, prometheus_client, a database driver or
generated protobuf code; ``tests/test_architecture.py`` enforces it.
"""

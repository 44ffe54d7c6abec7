"""Sample bots, each a separate gRPC server process: ``arena-bot KIND --listen HOST:PORT``."""

"""gRPC plumbing shared by the bots' kit, the referee and the arena: TLS credentials from PEM
files (``netkit.tls``) and listening on a port (``netkit.listen``). It imports none of them, so
each may import it."""

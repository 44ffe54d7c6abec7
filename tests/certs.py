"""Certificates made in the test (trustme): a CA, a server certificate for loopback, a client
certificate, and a second CA that trusts none of them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import trustme

CLIENT_NAME = "arena.example.org"
"""The name in the client certificate (what a bot sees of the arena under mutual TLS)."""


@dataclass(frozen=True)
class Certs:
    """PEM files: ``ca`` signed both leaf certificates; ``other_ca`` signed nothing here."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path


def make_certs(folder: Path, server_names: tuple[str, ...] = ("127.0.0.1", "::1")) -> Certs:
    """Write a fresh CA, a server certificate for ``server_names`` and a client certificate."""
    folder.mkdir(parents=True, exist_ok=True)
    ca, other = trustme.CA(), trustme.CA()
    server = ca.issue_cert(*server_names)
    client = ca.issue_cert(CLIENT_NAME)
    certs = Certs(*(folder / name for name in ("ca", "sc", "sk", "cc", "ck", "other")))
    ca.cert_pem.write_to_path(str(certs.ca))
    server.private_key_pem.write_to_path(str(certs.server_key))
    server.cert_chain_pems[0].write_to_path(str(certs.server_cert))
    for pem in server.cert_chain_pems[1:]:
        pem.write_to_path(str(certs.server_cert), append=True)
    client.private_key_pem.write_to_path(str(certs.client_key))
    client.cert_chain_pems[0].write_to_path(str(certs.client_cert))
    other.cert_pem.write_to_path(str(certs.other_ca))
    return certs

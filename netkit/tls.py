"""TLS credentials for gRPC from PEM files: a server's (a bot, the arena API) and a client's
(the referee dialling ``tls://`` bots, clients of the API).

A ``ServerTls`` names the certificate chain and key and, for mutual TLS, the CA whose client
certificates are accepted. A ``ClientTls`` names the CA bundle to verify the server against
(none: gRPC's default roots, or the file in ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``) and, for
mutual TLS, the certificate and key the client presents. Files are checked (with ``ssl``) when
the credentials are made, so a bad file is a one-line error at start-up: grpc itself would say
only "Failed to bind", or fail the first handshake. The referee and the arena use this module
too; it lives in netkit, which imports none of them.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

import grpc


class TlsConfigError(ValueError):
    """A TLS certificate, key or CA file that cannot be read or used."""


@dataclass(frozen=True)
class ServerTls:
    """TLS for a server: its certificate chain and private key (PEM files) and, for mutual TLS,
    the CA file whose client certificates it accepts (then a caller without one is refused)."""

    cert_file: str | Path
    key_file: str | Path
    client_ca_file: str | Path | None = None

    def credentials(self) -> grpc.ServerCredentials:
        """gRPC server credentials, the files checked first (they load, the key fits)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        chain, key = _key_pair(context, self.cert_file, self.key_file, "TLS certificate")
        client_ca = None
        if self.client_ca_file is not None:
            client_ca = _ca(context, self.client_ca_file, "client CA file")
        return grpc.ssl_server_credentials(
            [(key, chain)], root_certificates=client_ca, require_client_auth=client_ca is not None
        )


@dataclass(frozen=True)
class ClientTls:
    """What a TLS client trusts (``ca_file``; None: default roots) and, for mutual TLS, the
    certificate chain and key it presents (both or neither)."""

    ca_file: str | Path | None = None
    cert_file: str | Path | None = None
    key_file: str | Path | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        """gRPC channel credentials, the files checked first (they load, the key fits)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        roots = None if self.ca_file is None else _ca(context, self.ca_file, "CA file")
        chain = key = None
        if self.cert_file is not None and self.key_file is not None:
            chain, key = _key_pair(context, self.cert_file, self.key_file, "client certificate")
        elif self.cert_file is not None or self.key_file is not None:
            raise TlsConfigError("a client certificate needs both its certificate and key file")
        return grpc.ssl_channel_credentials(
            root_certificates=roots, private_key=key, certificate_chain=chain
        )


def _key_pair(
    context: ssl.SSLContext, cert_file: str | Path, key_file: str | Path, what: str
) -> tuple[bytes, bytes]:
    """The PEM chain and key, once ``ssl`` has loaded them and checked that they fit."""
    try:
        context.load_cert_chain(cert_file, key_file, password=lambda: _no_password(key_file))
        return Path(cert_file).read_bytes(), Path(key_file).read_bytes()
    except OSError as error:  # ssl.SSLError is one
        raise TlsConfigError(f"{what} {cert_file} with key {key_file}: {_reason(error)}") from None


def _ca(context: ssl.SSLContext, ca_file: str | Path, what: str) -> bytes:
    """The PEM CA bundle, once ``ssl`` has loaded a certificate from it."""
    try:
        context.load_verify_locations(cafile=ca_file)
        return Path(ca_file).read_bytes()
    except OSError as error:
        raise TlsConfigError(f"{what} {ca_file}: {_reason(error)}") from None


def _no_password(key_file: str | Path) -> bytes:
    raise TlsConfigError(f"TLS key {key_file} is encrypted; give an unencrypted key file")


def _reason(error: OSError) -> str:
    if isinstance(error, ssl.SSLError):
        return "not a PEM file of that kind" if "PEM lib" in str(error) else str(error)
    return error.strerror or str(error)

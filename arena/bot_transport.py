"""How the referee reaches a registered bot (issue 20), kept in the scheme of its stored
endpoint so every path that hands endpoints to the referee (claims, validation, health
probes) carries it without a schema change:

- ``host:port`` or ``tls://host:port``: unary calls (``BOT_TRANSPORT_UNARY``);
- ``stream://host:port`` (or ``stream://tls://host:port``): the referee dials ``Play``;
- ``outbound://BOT_ID``: the bot dials ``ConnectBot``; it has no address.

The stored text is the owner's endpoint with the scheme added; the public API shows an
outbound bot's endpoint as empty.
"""

from __future__ import annotations

from cardarena.arena.v1 import arena_service_pb2 as pb

STREAM = "stream://"
OUTBOUND = "outbound://"
OUTBOUND_UNNAMED = OUTBOUND
"""What registration stores for an outbound bot until the store names it by its new id."""


def stored_endpoint(transport: int, endpoint: str) -> str:
    """The endpoint to store for a registration (``ValueError`` if the two disagree)."""
    if transport == pb.BOT_TRANSPORT_OUTBOUND:
        if endpoint:
            raise ValueError(
                "an outbound bot has no endpoint: leave it empty (or give the transport, "
                "UNARY or STREAM, that the endpoint serves)"
            )
        return OUTBOUND_UNNAMED
    if endpoint.startswith(OUTBOUND):
        raise ValueError("register an outbound bot with transport BOT_TRANSPORT_OUTBOUND")
    if transport == pb.BOT_TRANSPORT_STREAM and not endpoint.startswith(STREAM):
        return STREAM + endpoint
    return endpoint


def updated_endpoint(current: str, transport: int, endpoint: str) -> str | None:
    """The endpoint to store when an update names a transport and/or an endpoint (None: no
    change). An unnamed transport keeps the bot's; a named one with no endpoint keeps the
    bot's address (``ValueError`` if it has none, as an outbound bot)."""
    if transport == pb.BOT_TRANSPORT_UNSPECIFIED:
        if not endpoint:
            return None
        transport = transport_of(current)
    elif not endpoint and transport != pb.BOT_TRANSPORT_OUTBOUND:
        if current.startswith(OUTBOUND):
            raise ValueError("a bot that dials out has no address: give the endpoint it serves")
        endpoint = address_part(current)
    return stored_endpoint(transport, endpoint)


def address_part(endpoint: str) -> str:
    """What the endpoint guard checks: the endpoint without the stream scheme."""
    return endpoint.removeprefix(STREAM)


def transport_of(endpoint: str) -> int:
    """The ``BotTransport`` a stored endpoint says."""
    if endpoint.startswith(OUTBOUND):
        return pb.BOT_TRANSPORT_OUTBOUND
    if endpoint.startswith(STREAM):
        return pb.BOT_TRANSPORT_STREAM
    return pb.BOT_TRANSPORT_UNARY


def shown_endpoint(endpoint: str) -> str:
    """The endpoint as the API shows it (an outbound bot has none)."""
    return "" if endpoint.startswith(OUTBOUND) else endpoint

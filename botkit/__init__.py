"""The bot author's kit: write a function from a request to an action, serve it with one call.

    from botkit import serve

    def choose(request):
        return request.legal_actions[0]

    serve(choose, name="first-legal", address="127.0.0.1:50051")

``request`` is a ``cardarena.bot.v1.ChooseActionRequest``: the seat's observation, its legal
actions and its clock. Return one of ``request.legal_actions``. ``time_left_s()`` inside
``choose`` gives the seconds left before the referee's deadline for this move.

``serve(..., tls_cert=..., tls_key=...)`` serves TLS (register the bot as ``tls://host:port``);
``client_ca=...`` also requires the caller's certificate, whose names ``caller_identities()``
gives inside ``choose``. A port already in use stops ``serve`` with a one-line error.

``serve`` answers the unary calls and the ``Play`` stream (the arena picks by the bot's
registered transport). A bot behind NAT registers as outbound and dials the arena instead:

    connect(choose, arena="arena.example.org:50050", token=OWNER_TOKEN, bot_id=BOT_ID)

with reconnect and back-off; the same ``choose`` runs either way (docs/bot-protocol.md).
"""

from botkit.bot import Bot, ChooseFn, caller_identities, time_left_s
from botkit.server import serve, serve_async
from botkit.stream import connect, connect_async
from netkit.tls import ClientTls, ServerTls

__all__ = [
    "Bot",
    "ChooseFn",
    "ClientTls",
    "ServerTls",
    "caller_identities",
    "connect",
    "connect_async",
    "serve",
    "serve_async",
    "time_left_s",
]

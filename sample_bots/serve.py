"""``arena-bot``: run one sample bot as its own gRPC server process."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from botkit import Bot, ClientTls, connect, serve
from sample_bots.king_heuristic import make_king_heuristic_bot
from sample_bots.klaberjass_heuristic import make_klaberjass_heuristic_bot
from sample_bots.mau_mau_heuristic import make_mau_mau_heuristic_bot
from sample_bots.oh_hell_heuristic import make_oh_hell_heuristic_bot
from sample_bots.pinochle_heuristic import make_pinochle_heuristic_bot
from sample_bots.random_bot import make_random_bot
from sample_bots.search import (
    make_king_search_bot,
    make_klaberjass_search_bot,
    make_oh_hell_search_bot,
    make_pinochle_search_bot,
)

BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": make_random_bot,
    "king-heuristic": make_king_heuristic_bot,
    "mau-mau-heuristic": make_mau_mau_heuristic_bot,
    "klaberjass-heuristic": make_klaberjass_heuristic_bot,
    "pinochle-heuristic": make_pinochle_heuristic_bot,
    "oh-hell-heuristic": make_oh_hell_heuristic_bot,
    "oh-hell-search": make_oh_hell_search_bot,
    "king-search": make_king_search_bot,
    "klaberjass-search": make_klaberjass_search_bot,
    "pinochle-search": make_pinochle_search_bot,
}


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments and serve the chosen bot until stopped."""
    parser = argparse.ArgumentParser(prog="arena-bot", description=__doc__)
    parser.add_argument("kind", nargs="?", choices=sorted(BOTS), help="which sample bot to run")
    parser.add_argument(
        "--list", action="store_true", help="print the kinds of sample bot, one a line, and exit"
    )
    parser.add_argument("--listen", default="127.0.0.1:0", help="host:port (port 0 = any)")
    parser.add_argument("--seed", type=int, default=None, help="seed for the bot's own choices")
    parser.add_argument("--tls-cert", default=None, help="PEM certificate chain: serve TLS")
    parser.add_argument("--tls-key", default=None, help="PEM private key of --tls-cert")
    parser.add_argument(
        "--client-ca", default=None, help="PEM CA file: accept only callers it signed (mTLS)"
    )
    parser.add_argument(
        "--max-concurrent-matches",
        type=int,
        default=0,
        help="most matches the arena may give this bot at once (announced in GetInfo; 0: no "
        "preference)",
    )
    parser.add_argument(
        "--connect",
        metavar="ARENA",
        help="dial the arena at host:port instead of serving (a bot registered as outbound; "
        "needs --bot-id and --token)",
    )
    parser.add_argument("--bot-id", help="with --connect: the bot's id from registration")
    parser.add_argument("--tls", action="store_true", help="with --connect: dial over TLS")
    parser.add_argument(
        "--ca-file", default=None, help="with --connect --tls: the CA to trust (default: system)"
    )
    parser.add_argument(
        "--token", help="with --connect: the bot's key or its owner's token ('-': read stdin)"
    )
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(sorted(BOTS)))
        return
    if args.kind is None:
        parser.error("which sample bot to run? (--list names them)")
    if args.max_concurrent_matches < 0:
        parser.error("--max-concurrent-matches must be 0 or more")
    if args.connect:
        if not args.bot_id or not args.token:
            parser.error("--connect needs --bot-id and --token")
        if args.token == "-":
            args.token = sys.stdin.readline().strip()
        if args.ca_file and not args.tls:
            parser.error("--ca-file goes with --tls")
        connect(
            BOTS[args.kind](args.seed),
            arena=args.connect,
            token=args.token,
            bot_id=args.bot_id,
            tls=ClientTls(ca_file=args.ca_file) if args.tls else None,
        )
        return
    serve(
        BOTS[args.kind](args.seed),
        address=args.listen,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        client_ca=args.client_ca,
        max_concurrent_matches=args.max_concurrent_matches,
    )


if __name__ == "__main__":
    main()

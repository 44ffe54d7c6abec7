"""Search bots for the trick-taking games: flat Monte Carlo over determinized deals.

``make_<game>_search_bot(seed, budget_ms=200, max_worlds=100_000)`` gives a ``botkit.Bot`` that
samples worlds consistent with each request (see ``core``), evaluates every legal action in each
world with the referee's own rules engine and a quick playout policy, and answers the best. It
stops at ``budget_ms`` or half the request's move time, whichever is less, and falls back to the
game's heuristic bot for decisions it does not search or when no world fits in the time.
"""

from __future__ import annotations

from botkit import Bot
from sample_bots.king_heuristic import make_king_heuristic_bot
from sample_bots.klaberjass_heuristic import make_klaberjass_heuristic_bot
from sample_bots.oh_hell_heuristic import make_oh_hell_heuristic_bot
from sample_bots.pinochle_heuristic import make_pinochle_heuristic_bot
from sample_bots.search.core import make_search_bot
from sample_bots.search.king import KingAdapter
from sample_bots.search.klaberjass import KlaberjassAdapter
from sample_bots.search.oh_hell import OhHellAdapter
from sample_bots.search.pinochle import PinochleAdapter

BUDGET_MS = 200.0
MAX_WORLDS = 100_000


def make_oh_hell_search_bot(
    seed: int | None = None, budget_ms: float = BUDGET_MS, max_worlds: int = MAX_WORLDS
) -> Bot:
    """The Oh Hell search bot (bids and card play searched)."""
    bot, _ = make_search_bot(
        "oh-hell-search",
        "oh-hell",
        OhHellAdapter(),
        make_oh_hell_heuristic_bot(seed),
        seed,
        budget_ms,
        max_worlds,
    )
    return bot


def make_king_search_bot(
    seed: int | None = None, budget_ms: float = BUDGET_MS, max_worlds: int = MAX_WORLDS
) -> Bot:
    """The King search bot (card play searched, the auction left to the heuristic)."""
    bot, _ = make_search_bot(
        "king-search",
        "king",
        KingAdapter(),
        make_king_heuristic_bot(seed),
        seed,
        budget_ms,
        max_worlds,
    )
    return bot


def make_klaberjass_search_bot(
    seed: int | None = None, budget_ms: float = BUDGET_MS, max_worlds: int = MAX_WORLDS
) -> Bot:
    """The Klaberjass search bot (card play searched; bidding, dix and declarations heuristic)."""
    bot, _ = make_search_bot(
        "klaberjass-search",
        "klaberjass",
        KlaberjassAdapter(),
        make_klaberjass_heuristic_bot(seed),
        seed,
        budget_ms,
        max_worlds,
    )
    return bot


def make_pinochle_search_bot(
    seed: int | None = None, budget_ms: float = BUDGET_MS, max_worlds: int = MAX_WORLDS
) -> Bot:
    """The Pinochle search bot (phase-2 card play searched; the rest heuristic)."""
    bot, _ = make_search_bot(
        "pinochle-search",
        "pinochle",
        PinochleAdapter(),
        make_pinochle_heuristic_bot(seed),
        seed,
        budget_ms,
        max_worlds,
    )
    return bot

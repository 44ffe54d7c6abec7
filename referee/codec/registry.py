"""Which codec serves which game."""

from __future__ import annotations

from referee.codec.base import GameCodec
from referee.codec.king import KingCodec
from referee.codec.klaberjass import KlaberjassCodec
from referee.codec.mau_mau import MauMauCodec
from referee.codec.oh_hell import OhHellCodec
from referee.codec.pinochle import PinochleCodec
from referee.games.api import Game

CODECS: dict[str, type[GameCodec]] = {
    "oh-hell": OhHellCodec,
    "mau-mau": MauMauCodec,
    "king": KingCodec,
    "pinochle": PinochleCodec,
    "klaberjass": KlaberjassCodec,
}


def codec_for(game: Game) -> GameCodec:
    """A codec bound to ``game``."""
    return CODECS[game.type.name](game)

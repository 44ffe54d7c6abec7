"""The wire primitives every game's codec is built from, and the requests and records they feed.

Each game's codec (observations and actions in both directions) lives in the game's own folder
(``referee/games/<game>/codec.py``); ``referee.games.registry.codec_for(game)`` finds it.
Shared pieces (cards, options, settings) live in ``common``.
"""

from referee.codec.base import GameCodec, MalformedActionError

__all__ = ["GameCodec", "MalformedActionError"]

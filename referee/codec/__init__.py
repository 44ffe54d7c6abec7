"""The one place where protobuf messages meet the rules engine's own types.

``codec_for(game)`` returns the game's ``GameCodec``: observations and actions in both
directions. Shared pieces (cards, options, settings) live in ``common``.
"""

from referee.codec.base import GameCodec, MalformedActionError
from referee.codec.registry import codec_for

__all__ = ["GameCodec", "MalformedActionError", "codec_for"]

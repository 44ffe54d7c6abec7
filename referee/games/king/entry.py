"""King's registration: its rules, its codec and how tools run it."""

from referee.games.entry import GameEntry
from referee.games.king.codec import KingCodec
from referee.games.king.rules import KingState

ENTRY = GameEntry(
    state_class=KingState,
    codec=KingCodec,
    demo_seats=4,
    short_options={"stop_when_penalties_exhausted": True},
)

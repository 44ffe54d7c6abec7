"""King's registration: its rules, its codec and how tools run it."""

from referee.games.entry import GameEntry
from referee.games.king.codec import KingCodec
from referee.games.king.positions import position_of
from referee.games.king.rules import KingState

ENTRY = GameEntry(
    state_class=KingState,
    codec=KingCodec,
    demo_seats=4,
    position_of=position_of,
    short_options={"stop_when_penalties_exhausted": True},
)

"""Klaberjass's registration: its rules, its codec and how tools run it."""

from referee.games.entry import GameEntry
from referee.games.klaberjass.codec import KlaberjassCodec
from referee.games.klaberjass.positions import position_of
from referee.games.klaberjass.rules import KlaberjassState

ENTRY = GameEntry(
    state_class=KlaberjassState,
    codec=KlaberjassCodec,
    demo_seats=2,
    position_of=position_of,
    short_options={"target_score": 100},
)

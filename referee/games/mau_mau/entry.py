"""Mau-Mau's registration: its rules, its codec and how tools run it."""

from referee.games.entry import GameEntry
from referee.games.mau_mau.codec import MauMauCodec
from referee.games.mau_mau.luck import match_luck
from referee.games.mau_mau.positions import position_of
from referee.games.mau_mau.rules import MauMauState

ENTRY = GameEntry(
    state_class=MauMauState,
    codec=MauMauCodec,
    demo_seats=4,
    position_of=position_of,
    short_options={"target": 100},
    # A reshuffle drawn from the match's generator would deal later deals differently in a
    # rotation whose play ran the stock out more often.
    duplicate_options={"reshuffle": "deal_seeded"},
    luck=match_luck,
)

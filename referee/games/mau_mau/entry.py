"""Mau-Mau's registration: its rules, its codec and how tools run it."""

from referee.games.entry import GameEntry
from referee.games.mau_mau.codec import MauMauCodec
from referee.games.mau_mau.rules import MauMauState

ENTRY = GameEntry(
    state_class=MauMauState,
    codec=MauMauCodec,
    demo_seats=4,
    short_options={"target": 100},
)

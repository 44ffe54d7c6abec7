"""Oh Hell's registration: its rules, its codec and how tools run it."""

from referee.codec.oh_hell import OhHellCodec
from referee.games.entry import GameEntry
from referee.games.oh_hell.rules import OhHellState

ENTRY = GameEntry(
    state_class=OhHellState,
    codec=OhHellCodec,
    demo_seats=4,
    short_options={"deal_style": "short_low"},
)

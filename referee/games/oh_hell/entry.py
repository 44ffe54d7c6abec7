"""Oh Hell's registration: its rules, its codec and how tools run it."""

from referee.games.entry import GameEntry
from referee.games.oh_hell.codec import OhHellCodec
from referee.games.oh_hell.positions import position_of
from referee.games.oh_hell.rules import OhHellState

ENTRY = GameEntry(
    state_class=OhHellState,
    codec=OhHellCodec,
    demo_seats=4,
    position_of=position_of,
    short_options={"deal_style": "short_low"},
)

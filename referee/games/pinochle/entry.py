"""Pinochle's registration: its rules, its codec and how tools run it."""

from referee.games.entry import GameEntry
from referee.games.pinochle.codec import PinochleCodec
from referee.games.pinochle.positions import position_of
from referee.games.pinochle.rules import PinochleState

ENTRY = GameEntry(
    state_class=PinochleState,
    codec=PinochleCodec,
    demo_seats=2,
    position_of=position_of,
    short_options={},
    # Random players declare out within a few moves, so default Pinochle games are mostly set-up;
    # without declaring out the same figure covers whole games of card play and melds.
    whole_game_options=({"declare_out": "disabled"},),
)

"""Plays any game by picking uniformly among the legal actions it is sent."""

from __future__ import annotations

import random

from botkit import Bot
from cardarena.bot.v1 import bot_service_pb2
from cardarena.game.v1 import game_pb2


def make_random_bot(seed: int | None = None) -> Bot:
    """A bot that answers a uniformly random legal action (seeded when ``seed`` is given)."""
    rng = random.Random(seed)

    def choose(request: bot_service_pb2.ChooseActionRequest) -> game_pb2.Action:
        return rng.choice(request.legal_actions)

    return Bot(choose=choose, name="random", version="1")

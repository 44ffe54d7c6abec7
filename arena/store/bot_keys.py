"""Bot keys: a credential that opens one outbound bot's ConnectBot stream and nothing else.

An owner puts the key, not the owner's token, on the machine that runs the bot: a stolen key
can play that one bot's matches until it is revoked, but cannot register, change, pause or
retire anything. A bot has at most one key (``bots.key_hash``; '' for none); making a new one
replaces the old. Keys are stored only as hashes, like owner tokens.
"""

from __future__ import annotations

import secrets

from arena.store.db import Tx

BOT_KEY_PREFIX = "cab_"
"""What every bot key starts with (owner tokens start with ``cao_``): a mark secret scanners
can look for, and never '-', which a command line would read as an option."""


def new_bot_key() -> str:
    """A new bot key: the prefix and 192 random bits, URL-safe."""
    return BOT_KEY_PREFIX + secrets.token_urlsafe(24)


def set_key_hash(tx: Tx, bot_id: str, key_hash: str) -> None:
    """Store ``key_hash`` as the bot's only key ('' revokes it)."""
    tx.execute("UPDATE bots SET key_hash = ? WHERE bot_id = ?", (key_hash, bot_id))


def revoke_owner_keys(tx: Tx, owner_id: str) -> None:
    """Revoke the keys of every bot of an owner (the owner's token was revoked)."""
    tx.execute("UPDATE bots SET key_hash = '' WHERE owner_id = ?", (owner_id,))

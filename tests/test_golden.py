"""Every golden playthrough replays: same seed → same deal → same match → same bytes.

The files under ``tests/golden/`` were recorded from earlier code (``tests/playthroughs.py``
says how and why); this replays each one with today's rules, codecs and request encoder and
names the first line that differs.
"""

from __future__ import annotations

import pytest

from tests.playthroughs import GOLDEN_DIR, all_files, golden_path, render

FILES = list(all_files())


@pytest.mark.parametrize(("game", "seats"), FILES, ids=[f"{g}-{s}" for g, s in FILES])
def test_playthroughs_replay(game: str, seats: int) -> None:
    path = golden_path(game, seats)
    assert path.exists(), f"no golden file {path.name}: record it with python -m tests.playthroughs"
    expected = path.read_text().splitlines()
    actual = render(game, seats).splitlines()
    for number, (want, got) in enumerate(zip(expected, actual, strict=False), start=1):
        assert got == want, f"{path.name}:{number} differs\n  recorded: {want}\n  now:      {got}"
    assert len(actual) == len(expected), f"{path.name}: {len(expected)} lines, now {len(actual)}"


def test_no_stray_golden_files() -> None:
    """A file for a game or seat count that no longer exists is a contract silently dropped."""
    known = {golden_path(game, seats).name for game, seats in FILES}
    stray = sorted(path.name for path in GOLDEN_DIR.glob("*.txt") if path.name not in known)
    assert not stray, f"golden files for no registered game/seat count: {stray}"


def test_golden_files_record_deals() -> None:
    """Each playthrough records the seed → deal mapping, not only the moves."""
    for game, seats in FILES:
        text = golden_path(game, seats).read_text()
        for block in text.split("\nplaythrough ")[1:]:
            assert "\ndeal " in block, f"{game}-{seats}: a playthrough without its deal"

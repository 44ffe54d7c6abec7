"""``Match``, the sans-I/O core of a match, on its own: the clock, the time bank, the first-move
allowance, default actions, forfeits and voids, with elapsed times given by the test (no bot,
no network, no real time). The runner's end-to-end tests (tests/test_faults.py) cover the
shell around it."""

from __future__ import annotations

import pytest

from referee.games.api import Game
from referee.games.registry import make_game
from referee.match import (
    DefaultAction,
    Fault,
    FaultKind,
    FaultPolicy,
    Match,
    MatchStatus,
    MoveBook,
    TimeControl,
)

MS = 1000
"""Microseconds in a millisecond: elapsed times are given in µs, allowances in ms."""


def oh_hell() -> Game:
    """A small game with many decisions per seat."""
    return make_game("oh-hell", 3)


def new_match(
    time_control: TimeControl | None = None,
    policy: FaultPolicy | None = None,
    seed: int = 7,
) -> Match:
    """A match of three-seat Oh Hell with the given clock and fault policy."""
    return Match(oh_hell(), seed, time_control or TimeControl(), policy or FaultPolicy())


def answer_legally(match: Match, elapsed_us: int) -> int:
    """The current seat plays its first legal action after ``elapsed_us``; returns the seat."""
    seat = match.to_act()
    match.play(match.legal_actions()[0], elapsed_us)
    return seat


def play_to_the_end(match: Match) -> None:
    """Every seat answers legally at once until the match ends."""
    while not match.is_over:
        answer_legally(match, 0)


# -- the clock ---------------------------------------------------------------------------------


def test_an_answer_within_the_move_time_leaves_the_bank_untouched() -> None:
    match = new_match(TimeControl(move_time_ms=100, time_bank_ms=500))
    seat = answer_legally(match, 100 * MS)
    assert match.time_banks_ms[seat] == 500
    assert match.moves[-1].fault is None
    assert match.moves[-1].time_bank_ms == 500


def test_an_overrun_is_paid_from_the_bank_and_the_next_request_says_so() -> None:
    match = new_match(TimeControl(move_time_ms=100, time_bank_ms=500))
    seat = answer_legally(match, 130 * MS)
    assert match.time_banks_ms[seat] == 470
    assert match.clocks_ms[seat] == (100, 470)
    assert match.deadline_ms(seat) == 570
    assert match.moves[-1].fault is None
    assert match.moves[-1].time_bank_ms == 470


def test_an_overrun_the_bank_cannot_pay_is_a_fault_and_empties_the_bank() -> None:
    match = new_match(TimeControl(move_time_ms=100, time_bank_ms=50))
    seat = match.to_act()
    legal = list(match.legal_actions())
    log = match.play(legal[0], 151 * MS)
    assert log.fault is not None and log.fault.kind is FaultKind.TIME_BANK_EXHAUSTED
    assert match.time_banks_ms[seat] == 0
    assert match.clocks_ms[seat] == (100, 0)
    assert log.action in legal  # a default action was played instead
    assert match.fault_counts[seat] == 1


def test_the_bank_pays_an_overrun_of_exactly_its_size() -> None:
    match = new_match(TimeControl(move_time_ms=100, time_bank_ms=50))
    seat = answer_legally(match, 150 * MS)
    assert match.moves[-1].fault is None
    assert match.time_banks_ms[seat] == 0


def test_the_first_move_of_each_seat_has_its_own_allowance() -> None:
    control = TimeControl(move_time_ms=100, time_bank_ms=0, first_move_time_ms=2000)
    match = new_match(control)
    seats = match.game.num_seats
    first_seat = match.to_act()
    assert match.move_allowance_ms(first_seat) == 2000
    for _ in range(seats):  # each seat's first decision may take 1.9 s without a fault
        answer_legally(match, 1900 * MS)
        assert match.moves[-1].fault is None
    assert all(match.move_allowance_ms(seat) == 100 for seat in range(seats))
    assert all(match.clocks_ms[seat] == (100, 0) for seat in range(seats))
    seat = match.to_act()
    log = match.play(match.legal_actions()[0], 1900 * MS)  # not any more
    assert log.fault is not None and log.fault.kind is FaultKind.TIME_BANK_EXHAUSTED
    assert log.seat == seat


def test_a_timeout_with_a_bank_left_is_told_as_the_bank_running_out() -> None:
    match = new_match(TimeControl(move_time_ms=100, time_bank_ms=300))
    seat = match.to_act()
    log = match.fault(Fault(FaultKind.TIMEOUT, "no answer in time"), 400 * MS)
    assert log.fault is not None and log.fault.kind is FaultKind.TIME_BANK_EXHAUSTED
    assert "300 ms bank" in log.fault.detail
    assert match.time_banks_ms[seat] == 0


def test_a_timeout_with_no_bank_stays_a_timeout() -> None:
    match = new_match(TimeControl(move_time_ms=100, time_bank_ms=0))
    log = match.fault(Fault(FaultKind.TIMEOUT, "no answer in time"), 100 * MS)
    assert log.fault is not None and log.fault.kind is FaultKind.TIMEOUT


def test_a_fault_that_is_not_about_time_keeps_the_bank() -> None:
    match = new_match(TimeControl(move_time_ms=100, time_bank_ms=300))
    seat = match.to_act()
    match.fault(Fault(FaultKind.MALFORMED_RESPONSE, "not a ChooseActionResponse"), 5 * MS)
    assert match.time_banks_ms[seat] == 300


@pytest.mark.parametrize(
    ("move_time_ms", "time_bank_ms", "first_move_time_ms"),
    [(0, 100, None), (-1, 100, None), (100, -1, None), (100, 100, 0)],
)
def test_a_time_control_that_makes_no_sense_is_refused(
    move_time_ms: int, time_bank_ms: int, first_move_time_ms: int | None
) -> None:
    with pytest.raises(ValueError):
        TimeControl(move_time_ms, time_bank_ms, first_move_time_ms)


# -- faults, default actions, forfeits -----------------------------------------------------------


def test_an_illegal_action_is_a_fault_and_a_legal_default_is_played() -> None:
    match = new_match()
    seat = match.to_act()
    legal = set(match.legal_actions())
    illegal = next(action for action in range(1000) if action not in legal)
    log = match.play(illegal, 1 * MS)
    assert log.fault is not None and log.fault.kind is FaultKind.ILLEGAL_ACTION
    assert "is not legal now" in log.fault.detail
    assert log.action in legal and log.seat == seat
    assert match.seat_moves[seat] == 1


def test_the_first_legal_action_is_the_default_when_the_policy_says_so() -> None:
    match = new_match(policy=FaultPolicy(default_action=DefaultAction.FIRST, max_faults=0))
    while not match.is_over:
        first = match.legal_actions()[0]
        assert match.fault(Fault(FaultKind.UNREACHABLE, "gone"), 0).action == first


def test_random_defaults_are_reproducible_from_the_seed() -> None:
    def defaults(seed: int) -> list[int]:
        match = new_match(policy=FaultPolicy(max_faults=0), seed=seed)
        actions = []
        while not match.is_over:
            actions.append(match.fault(Fault(FaultKind.UNREACHABLE, "gone"), 0).action)
        return actions

    assert defaults(11) == defaults(11)
    assert defaults(11) != defaults(12)


def test_the_last_allowed_fault_forfeits_and_the_faulting_seat_ranks_last() -> None:
    match = new_match(policy=FaultPolicy(max_faults=2))
    culprit = match.to_act()
    faults = 0
    while not match.is_over:
        if match.to_act() == culprit:
            match.fault(Fault(FaultKind.TRANSPORT_ERROR, "reset"), 0)
            faults += 1
        else:
            answer_legally(match, 0)
    assert faults == 2
    assert match.status is MatchStatus.FORFEITED
    assert match.forfeited_seat == culprit
    assert "2 faults" in match.status_detail and "reset" in match.status_detail
    outcome = match.outcome()
    assert outcome is not None
    assert outcome.ranks[culprit] == max(outcome.ranks)
    assert all(
        outcome.ranks[seat] < outcome.ranks[culprit]
        for seat in range(match.game.num_seats)
        if seat != culprit
    )


def test_no_limit_means_faults_never_forfeit() -> None:
    match = new_match(policy=FaultPolicy(max_faults=0))
    while not match.is_over:
        match.fault(Fault(FaultKind.UNREACHABLE, "gone"), 0)
    assert match.status is MatchStatus.COMPLETED
    assert sum(match.fault_counts) == len(match.moves)


# -- the end of a match --------------------------------------------------------------------------


def test_a_match_played_to_the_end_completes_with_the_rules_outcome() -> None:
    match = new_match()
    play_to_the_end(match)
    assert match.status is MatchStatus.COMPLETED
    assert match.outcome() == match.state.outcome()
    assert sum(match.seat_moves) == len(match.moves)
    assert [log.index for log in match.moves] == list(range(len(match.moves)))


@pytest.mark.parametrize("end", ["void", "abort"])
def test_a_voided_or_aborted_match_has_no_outcome_and_ends_once(end: str) -> None:
    match = new_match()
    answer_legally(match, 0)
    getattr(match, end)("the referee stopped")
    assert match.is_over
    assert match.status is (MatchStatus.VOIDED if end == "void" else MatchStatus.ABORTED)
    assert match.outcome() is None
    with pytest.raises(RuntimeError, match="already ended"):
        match.void("again")


def test_a_match_that_reaches_the_move_limit_is_voided_not_rated() -> None:
    full = new_match()
    play_to_the_end(full)
    length = len(full.moves)
    capped = Match(oh_hell(), 7, max_moves=length - 1)
    play_to_the_end(capped)
    assert capped.status is MatchStatus.VOIDED
    assert len(capped.moves) == length - 1, "voided at the limit, not a move later"
    assert capped.outcome() is None
    assert f"no end after {length - 1} moves" in capped.status_detail


def test_a_match_that_ends_on_its_last_allowed_move_completes() -> None:
    full = new_match()
    play_to_the_end(full)
    exact = Match(oh_hell(), 7, max_moves=len(full.moves))
    play_to_the_end(exact)
    assert exact.status is MatchStatus.COMPLETED
    assert exact.outcome() == full.outcome()


def test_a_fault_on_the_last_allowed_move_voids_rather_than_forfeits() -> None:
    match = Match(oh_hell(), 7, policy=FaultPolicy(max_faults=1), max_moves=1)
    match.fault(Fault(FaultKind.ILLEGAL_ACTION, "nonsense"), 0)
    assert match.status is MatchStatus.VOIDED, "ended once, by the limit"


def test_a_move_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one move"):
        Match(oh_hell(), 7, max_moves=0)


def test_seat_moves_count_each_seats_own_decisions() -> None:
    match = new_match()
    seen = [0] * match.game.num_seats
    for _ in range(10):
        seen[answer_legally(match, 0)] += 1
    assert match.seat_moves == seen


# -- the move log ------------------------------------------------------------------------------


def test_the_move_book_gives_back_what_was_recorded() -> None:
    book = MoveBook()
    fault = Fault(FaultKind.TIMEOUT, "late")
    book.append(0, 12, 1500, None, 900)
    book.append(1, 40, 250_000, fault, 0)
    assert len(book) == 2
    assert book[0].action == 12 and book[0].elapsed_us == 1500 and book[0].fault is None
    assert book[-1] == book[1]
    assert book[1].fault == fault and book[1].seat == 1 and book[1].time_bank_ms == 0
    assert [log.index for log in book[0:2]] == [0, 1]

"""A match without I/O: who must act, the clock, faults, defaults and forfeits.

The runner asks ``Match`` which seat acts and how long it has, calls the bot however it likes,
and reports back either an action (``play``) or a fault (``fault``). ``Match`` applies the rules,
charges the time bank, plays a default action after a fault, ends the match by forfeit when a
seat has faulted too often, and keeps the log a match record is made from. It never sees gRPC.
"""

from __future__ import annotations

import enum
import random
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, overload

from referee.games.api import Game, IllegalActionError, Outcome, State, ranks_from_keys


class FaultKind(enum.Enum):
    """Why a bot's move was not its own answer (values match the wire's ``FaultKind``)."""

    TIMEOUT = 1
    TIME_BANK_EXHAUSTED = 2
    UNREACHABLE = 3
    TRANSPORT_ERROR = 4
    MALFORMED_RESPONSE = 5
    ILLEGAL_ACTION = 6
    RESPONSE_TOO_LARGE = 7


class MatchStatus(enum.Enum):
    """How a match ended (values match the wire's ``MatchStatus``)."""

    IN_PROGRESS = 0
    COMPLETED = 1
    FORFEITED = 2
    VOIDED = 3
    ABORTED = 4


@dataclass(frozen=True)
class Fault:
    """A typed bot failure with a human-readable detail."""

    kind: FaultKind
    detail: str


@dataclass(frozen=True)
class TimeControl:
    """The clock of every seat.

    Each move may take ``move_time_ms`` (network round trip included). An answer that takes
    longer is still accepted while the seat's time bank can pay the overrun (as Kaggle's
    overage time); the first move of a seat may take ``first_move_time_ms`` instead.
    """

    move_time_ms: int = 1000
    time_bank_ms: int = 10_000
    first_move_time_ms: int | None = None

    def __post_init__(self) -> None:
        if self.move_time_ms <= 0 or self.time_bank_ms < 0:
            raise ValueError("move time must be positive and the time bank not negative")
        if self.first_move_time_ms is not None and self.first_move_time_ms <= 0:
            raise ValueError("first move time must be positive")


class DefaultAction(enum.Enum):
    """What the referee plays for a seat after a fault."""

    RANDOM = "random"
    """A legal action drawn from a generator seeded by the match seed (reproducible)."""
    FIRST = "first"
    """The first legal action in the engine's order."""


@dataclass(frozen=True)
class FaultPolicy:
    """How the referee treats bot faults.

    After a fault the referee plays ``default_action`` for the seat so the match can finish.
    A seat's ``max_faults``-th fault in one match forfeits it (0 means never): the match ends,
    that seat ranks last and the others are ranked by their scores so far.
    """

    default_action: DefaultAction = DefaultAction.RANDOM
    max_faults: int = 5
    void_if_unreachable_at_start: bool = True


MAX_MOVES = 20_000
"""The most moves a match may make before the referee voids it. The rules let some matches
run forever (two-seat Mau-Mau with its stock and pile spent: draws lapse, and both hands can
grow past all play), which would hold a ladder's slot and its bots' for good. The longest of
150 random-play matches per game and seat count is under 900 moves (Mau-Mau 6 seats, 867);
the limit is more than 20 times that, and under the 100,000 moves the replay viewer takes."""


class MoveLog(NamedTuple):
    """One decision as it happened (a named tuple: one is made per decision, at half the cost
    of a frozen dataclass)."""

    index: int  # type: ignore[assignment]  # the field shadows ``tuple.index``, unused here
    seat: int
    action: int
    elapsed_us: int
    fault: Fault | None
    time_bank_ms: int


class MoveBook(Sequence[MoveLog]):
    """The moves of a match, stored as columns of machine integers (about 26 bytes a move).

    Thousands of matches are in flight at once and a long one makes hundreds of moves, so the
    log keeps plain arrays and a dict of the rare faults, and makes ``MoveLog`` views on demand.
    """

    def __init__(self) -> None:
        self._seats = array("b")
        self._actions = array("l")
        self._elapsed_us = array("q")
        self._banks_ms = array("q")
        self._faults: dict[int, Fault] = {}

    def append(
        self, seat: int, action: int, elapsed_us: int, fault: Fault | None, bank_ms: int
    ) -> MoveLog:
        """Record one move; returns its view."""
        index = len(self._seats)
        if fault is not None:
            self._faults[index] = fault
        self._seats.append(seat)
        self._actions.append(action)
        self._elapsed_us.append(elapsed_us)
        self._banks_ms.append(bank_ms)
        return MoveLog(index, seat, action, elapsed_us, fault, bank_ms)

    def __len__(self) -> int:
        return len(self._seats)

    def rows(self) -> Iterator[tuple[int, int, int, int, Fault | None, int]]:
        """Every move as ``(index, seat, action, elapsed_us, fault, time_bank_ms)``, in order:
        what ``MoveLog`` holds, without making one per move (a record is built from them)."""
        faults = self._faults
        columns = zip(self._seats, self._actions, self._elapsed_us, self._banks_ms, strict=True)
        for index, (seat, action, elapsed_us, bank_ms) in enumerate(columns):
            yield index, seat, action, elapsed_us, faults.get(index), bank_ms

    @overload
    def __getitem__(self, index: int) -> MoveLog: ...

    @overload
    def __getitem__(self, index: slice) -> list[MoveLog]: ...

    def __getitem__(self, index: int | slice) -> MoveLog | list[MoveLog]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        return MoveLog(
            index,
            self._seats[index],
            self._actions[index],
            self._elapsed_us[index],
            self._faults.get(index),
            self._banks_ms[index],
        )


@dataclass
class Match:
    """One match of one game between ``game.num_seats`` seats, driven from outside."""

    game: Game
    seed: int
    time_control: TimeControl = field(default_factory=TimeControl)
    policy: FaultPolicy = field(default_factory=FaultPolicy)
    max_moves: int = MAX_MOVES
    """Moves after which a match not over is voided (``MAX_MOVES``)."""

    def __post_init__(self) -> None:
        if self.max_moves <= 0:
            raise ValueError("a match must be allowed at least one move")
        self.state: State = self.game.new_state(self.seed)
        self.moves = MoveBook()
        self.status = MatchStatus.IN_PROGRESS
        self.status_detail = ""
        self.forfeited_seat: int | None = None
        self.fault_counts = [0] * self.game.num_seats
        self.time_banks_ms = [self.time_control.time_bank_ms] * self.game.num_seats
        self._has_moved = [False] * self.game.num_seats
        self.clocks_ms = [self._clock_ms(seat) for seat in range(self.game.num_seats)]
        """Each seat's (move allowance, time bank) as its next request states them.

        Kept up to date where either changes (a first move, an overrun paid from the bank, a
        fault that empties it), so the runner reads one tuple per request."""
        self.seat_moves = [0] * self.game.num_seats
        """How many moves each seat has made (answered or defaulted): the ``move_index`` of its
        next request. Counted per seat, not per match: some games ask a decision only of a
        seat whose hand allows it (declare a sequence, a meld turn), so a count of all moves
        would tell every other seat of that hand."""
        self._default_rng: random.Random | None = None
        """Draws the seeded-random default actions; made at the first fault (seeding costs
        ~4 µs, and most matches have none)."""
        self._outcome: Outcome | None = None

    # -- what the runner asks ----------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        """Whether the match has ended (for whatever reason)."""
        return self.status is not MatchStatus.IN_PROGRESS

    def to_act(self) -> int:
        """The seat that must act now (the match must not be over)."""
        return self.state.current_seat()

    def legal_actions(self) -> Sequence[int]:
        """The current seat's legal actions."""
        return self.state.legal_actions()

    def move_allowance_ms(self, seat: int) -> int:
        """Time for this seat's move before the bank is touched."""
        control = self.time_control
        if not self._has_moved[seat] and control.first_move_time_ms is not None:
            return control.first_move_time_ms
        return control.move_time_ms

    def deadline_ms(self, seat: int) -> int:
        """The longest this seat's answer may take: its move allowance plus its bank."""
        allowance_ms, bank_ms = self.clocks_ms[seat]
        return allowance_ms + bank_ms

    def _clock_ms(self, seat: int) -> tuple[int, int]:
        return self.move_allowance_ms(seat), self.time_banks_ms[seat]

    # -- what the runner reports ---------------------------------------------------------------

    def play(self, action: int, elapsed_us: int) -> MoveLog:
        """The current seat answered ``action`` after ``elapsed_us``.

        An illegal action or an overrun the bank cannot pay becomes a fault, and a default
        action is played instead.
        """
        seat = self.to_act()
        overrun_ms = elapsed_us / 1000 - self.clocks_ms[seat][0]  # the move allowance
        if overrun_ms > 0:
            bank = self.time_banks_ms[seat] - overrun_ms
            if bank < 0:
                return self.fault(
                    Fault(FaultKind.TIME_BANK_EXHAUSTED, f"answered after {elapsed_us} µs"),
                    elapsed_us,
                )
            self.time_banks_ms[seat] = int(bank)
            self.clocks_ms[seat] = self._clock_ms(seat)
        if action not in self.state.legal_actions():
            return self.fault(
                Fault(
                    FaultKind.ILLEGAL_ACTION,
                    f"{self.state.describe_action(action)} is not legal now",
                ),
                elapsed_us,
            )
        return self._apply(seat, action, elapsed_us, None)

    def fault(self, fault: Fault, elapsed_us: int) -> MoveLog:
        """The current seat failed to answer usefully: record it and play a default for it.

        A timeout while the seat still had a bank is the bank running out (the deadline was
        move time plus bank); either way the bank is empty afterwards.
        """
        seat = self.to_act()
        if fault.kind is FaultKind.TIMEOUT and self.time_banks_ms[seat] > 0:
            fault = Fault(
                FaultKind.TIME_BANK_EXHAUSTED,
                f"used its move time and {self.time_banks_ms[seat]} ms bank",
            )
        if fault.kind in (FaultKind.TIMEOUT, FaultKind.TIME_BANK_EXHAUSTED):
            self.time_banks_ms[seat] = 0
            self.clocks_ms[seat] = self._clock_ms(seat)
        self.fault_counts[seat] += 1
        legal = self.state.legal_actions()
        if self.policy.default_action is DefaultAction.FIRST:
            action = legal[0]
        else:
            rng = self._default_rng
            if rng is None:
                rng = self._default_rng = random.Random(f"defaults:{self.seed}")
            action = legal[rng.randrange(len(legal))]
        log = self._apply(seat, action, elapsed_us, fault)
        limit = self.policy.max_faults
        if not self.is_over and limit and self.fault_counts[seat] >= limit:
            self.forfeit(seat, f"seat {seat} reached {limit} faults (last: {fault.detail})")
        return log

    def forfeit(self, seat: int, detail: str) -> None:
        """End the match now: ``seat`` ranks last, the others by their scores so far."""
        scores = self.state.scores_so_far()
        sign = -1 if self.state.lower_score_wins() else 1
        keys = [(seat != s, sign * score) for s, score in enumerate(scores)]
        self._outcome = Outcome(tuple(scores), ranks_from_keys(keys))
        self.forfeited_seat = seat
        self._end(MatchStatus.FORFEITED, detail)

    def void(self, detail: str) -> None:
        """The match could not be played (not rated)."""
        self._end(MatchStatus.VOIDED, detail)

    def abort(self, detail: str) -> None:
        """The referee stopped the match before its end (not rated)."""
        self._end(MatchStatus.ABORTED, detail)

    def outcome(self) -> Outcome | None:
        """Scores and ranks of a completed or forfeited match; None otherwise."""
        return self._outcome

    # -- internals -----------------------------------------------------------------------------

    def _apply(self, seat: int, action: int, elapsed_us: int, fault: Fault | None) -> MoveLog:
        try:
            self.state.apply(action)
        except IllegalActionError as error:  # a bug in the engine's legal_actions
            raise AssertionError(f"engine rejected its own legal action: {error}") from error
        if not self._has_moved[seat]:
            self._has_moved[seat] = True
            self.clocks_ms[seat] = self._clock_ms(seat)
        log = self.moves.append(seat, action, elapsed_us, fault, self.time_banks_ms[seat])
        self.seat_moves[seat] += 1
        if self.state.is_terminal():
            self._outcome = self.state.outcome()
            self._end(MatchStatus.COMPLETED, "played to the end")
        elif log.index >= self.max_moves - 1:  # the index, not len(): no call a move
            self.void(f"no end after {self.max_moves} moves, the referee's limit: not rated")
        return log

    def _end(self, status: MatchStatus, detail: str) -> None:
        if self.is_over:
            raise RuntimeError(f"match already ended ({self.status.name})")
        self.status = status
        self.status_detail = detail

"""Every user error of the ``arena`` command is one line (``error: …``) on stderr and a non-zero
exit, never a traceback: run as a user runs it, in a subprocess."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli_args import parse_bool
from referee.games.api import InvalidOptionsError
from tests.helpers import ROOT

UNREACHABLE = "127.0.0.1:9"
"""A server address nobody listens on: a command that got past its checks would fail there."""


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "arena", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)


def error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one ``error:`` line of a refused command (asserting there is exactly one)."""
    assert result.returncode != 0, result
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


LADDER = ("create-ladder", "x", "--server", UNREACHABLE, "--token", "t")


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ((*LADDER, "--game", "nope"), ("unknown game 'nope'", "oh-hell")),
        ((*LADDER, "--game", "klaberjass", "--option", "target_score=lots"), ("whole number",)),
        ((*LADDER, "--game", "klaberjass", "--option", "target_score=0"), (">= 1",)),
        ((*LADDER, "--game", "oh-hell", "--option", "deal_style=wide"), ("one of long",)),
        ((*LADDER, "--game", "oh-hell", "--option", "nope=1"), ("NAME one of deal_style",)),
        ((*LADDER, "--game", "mau-mau", "--option", "jack_wild=maybe"), ("true or false",)),
        ((*LADDER, "--game", "oh-hell", "--seats", "four"), ("--seats", "whole number")),
        ((*LADDER, "--game", "oh-hell", "--move-time-ms", "0"), ("--move-time-ms", ">= 1")),
        ((*LADDER, "--game", "oh-hell", "--move-time-ms", "-50"), ("--move-time-ms",)),
        ((*LADDER, "--game", "oh-hell", "--concurrency", "0"), ("--concurrency",)),
        (("match", "oh-hell", "--bot", UNREACHABLE, "--move-time-ms", "0"), ("--move-time-ms",)),
        (("match", "mau-mau", "--bot", UNREACHABLE, "--option", "jack_wild=maybe"), ("maybe",)),
        (("play", "--game", "oh-hell", "--bot", UNREACHABLE, "--games", "x"), ("--games",)),
        (("play", "--game", "oh-hell", "--bot", UNREACHABLE, "--seats", "99"), ("seats",)),
        (("ladders", "--server", UNREACHABLE, "--token-file", "/no/such/file"), ("token file",)),
        (("serve", "--admin-token-file", "/no/such/file"), ("/no/such/file",)),
        (("serve", "--workers", "0", "--admin-token-file", "x"), ("--workers",)),
        (("no-such-command",), ("invalid choice",)),
    ],
    ids=lambda value: "-".join(value) if isinstance(value, tuple) else str(value),
)
def test_a_user_error_is_one_line_and_a_non_zero_exit(
    args: tuple[str, ...], fragments: tuple[str, ...]
) -> None:
    line = error_line(arena(*args))
    for fragment in fragments:
        assert fragment in line, line


def test_an_empty_token_file_is_refused_before_any_call(tmp_path: Path) -> None:
    empty = tmp_path / "token"
    empty.write_text("\n")
    assert "is empty" in error_line(
        arena("ladders", "--server", UNREACHABLE, "--token-file", str(empty))
    )


@pytest.mark.parametrize("flag", ["--listen", "--metrics-listen"])
def test_a_busy_port_stops_arena_serve_with_one_line(tmp_path: Path, flag: str) -> None:
    token = tmp_path / "admin"
    token.write_text("admin-secret")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        where = f"127.0.0.1:{taken.getsockname()[1]}"
        others = {"--listen": "127.0.0.1:0", "--metrics-listen": ""}
        others[flag] = where
        result = arena(
            "serve",
            "--admin-token-file",
            str(token),
            "--db",
            str(tmp_path / "a.db"),
            *(part for pair in others.items() for part in pair),
        )
    line = error_line(result)
    assert where in line and "in use" in line, line


@pytest.mark.parametrize(
    ("text", "value"),
    [
        *(("true", True), ("Yes", True), ("on", True), ("1", True)),
        *(("false", False), ("NO", False), ("off", False), ("0", False)),
    ],
)
def test_boolean_house_rules_take_the_usual_words(text: str, value: bool) -> None:
    assert parse_bool("jack_wild", text) is value


@pytest.mark.parametrize("text", ["maybe", "", "2", "truthy", "nein"])
def test_any_other_word_for_a_boolean_is_an_error_not_false(text: str) -> None:
    with pytest.raises(InvalidOptionsError, match="true or false"):
        parse_bool("jack_wild", text)

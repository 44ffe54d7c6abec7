"""Every field's bound, and errors that quote only a short, escaped prefix of the input; the
CLI's tables show remote text literally."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.table import Table

from arena import fields
from arena.render import literal

UNSHOWABLE = [
    "\x00",
    "\x07",
    "\x1b[31m",
    "\n",
    "\r",
    "\x7f",
    "\u0085",
    *(chr(c) for c in range(0x202A, 0x202F)),  # bidi embeddings and overrides
    *(chr(c) for c in range(0x2066, 0x206A)),  # bidi isolates
    "\u200b",  # zero-width space
    "\u200c",  # zero-width non-joiner
    "\u200d",  # zero-width joiner
    "\u2060",  # word joiner
    "\ufeff",  # zero-width no-break space
    "\u2028",  # line separator
    "\ue000",  # private use
]


@pytest.mark.parametrize("bad", UNSHOWABLE)
def test_names_and_free_text_refuse_control_and_format_characters(bad: str) -> None:
    assert fields.name("owner", f"ann{bad}") is not None
    assert fields.name("owner", f"{bad}ann") is not None
    assert fields.version(f"1.0{bad}") is not None
    assert fields.reason(f"spam{bad}") is not None


@pytest.mark.parametrize(
    "bad", ["", "-lead", ".lead", "[bold]x", "a b", "a:b:", "ä", "a/b", "x" * 65, "ann\n", "a\\b"]
)
def test_names_are_a_strict_character_set(bad: str) -> None:
    assert fields.name("name", bad) is not None


@pytest.mark.parametrize("good", ["a", "ann", "my-bot_2.1", "A" * 64, "0lead"])
def test_good_names_pass(good: str) -> None:
    assert fields.name("name", good) is None


def test_free_text_is_bounded_but_may_be_any_printable_text() -> None:
    assert fields.version("1.2.3 [beta] :smile: ünïcode") is None
    assert fields.version("v" * 64) is None
    assert fields.version("v" * 65) is not None
    assert fields.reason("") is not None and fields.reason("   ") is not None
    assert fields.reason("r" * 500) is None and fields.reason("r" * 501) is not None
    assert fields.endpoint_length("h" * 250 + ":1") is None
    assert fields.endpoint_length("h" * 256) is not None
    assert fields.identifier("bot_id", "") is not None
    assert fields.identifier("bot_id", "b" * 65) is not None


def test_options_are_bounded_in_number_names_and_text() -> None:
    class Text:
        def __init__(self, value: str) -> None:
            self.string_value = value

    assert fields.options({"scoring": Text("negative")}) is None
    assert fields.options({f"o{i}": Text("x") for i in range(33)}) is not None
    assert fields.options({"bad name": Text("x")}) is not None
    assert fields.options({"scoring": Text("x" * 65)}) is not None
    assert fields.options({"scoring": Text("\u202e")}) is not None


def test_numbers_have_ranges() -> None:
    assert fields.whole("concurrency", 0, 1, 10_000) is not None
    assert fields.whole("time_bank_ms", 4_294_967_295, 0, 3_600_000) is not None
    assert fields.whole("time_bank_ms", 0, 0, 3_600_000) is None


@pytest.mark.parametrize("size", [300, 1000, 3_000_000])
def test_a_refusal_quotes_a_short_escaped_prefix(size: int) -> None:
    value = "\x1b" + "x" * (size - 1)
    for message in (
        fields.name("owner", value),
        fields.version(value),
        fields.endpoint_length(value),
    ):
        assert message is not None
        assert len(message) < 200
        assert "\x1b" not in message and "\\x1b" in message
        assert f"({size} characters)" in message


def test_shown_keeps_short_values_whole() -> None:
    assert fields.shown("abc") == "'abc'"
    assert fields.shown("\u202e") == "'\\u202e'"
    assert fields.clipped("e" * 1000).endswith("…") and len(fields.clipped("e" * 1000)) == 200


@pytest.mark.parametrize(
    ("remote", "printed"),
    [
        ("127.0.0.1:abc", "127.0.0.1:abc"),
        (":smile: :abc:", ":smile: :abc:"),
        ("[bold red]x[/]", "[bold red]x[/]"),
        ("a\x1b[2Jb", "a\\x1b[2Jb"),
        ("evil\u202eftp.exe", "evil\\u202eftp.exe"),
        ("zero\u200bwidth", "zero\\u200bwidth"),
    ],
)
def test_remote_text_is_shown_literally_in_tables(remote: str, printed: str) -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    table = Table()
    table.add_column("bot")
    table.add_row(literal(remote))
    console.print(table)
    console.print(literal(remote))
    assert out.getvalue().count(printed) == 2, out.getvalue()
    assert "\x1b" not in out.getvalue() and "\u202e" not in out.getvalue()

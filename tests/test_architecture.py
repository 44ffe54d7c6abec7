"""The shape of the codebase: a pure rules core, dependencies pointing one way."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STDLIB_ONLY = ROOT / "referee" / "games"
REGISTRATION = {"entry.py", "registry.py", "codec.py"}
"""Modules under ``referee/games`` that join a game's rules to its codec (not stdlib-only)."""
PURE_MATCH = ROOT / "referee" / "match.py"
FORBIDDEN_IN_RULES = (
    "grpc",
    "trio",
    "prometheus_client",
    "sqlite3",
    "psycopg",
    "cardarena",
    "google",
    "asyncio",
    "rich",
    "arena",
    "botkit",
    "sample_bots",
)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_rules_and_match_import_only_the_standard_library_and_each_other() -> None:
    rules = [path for path in STDLIB_ONLY.rglob("*.py") if path.name not in REGISTRATION]
    files = [*rules, PURE_MATCH]
    assert len(files) > 3
    for path in files:
        for module in imported_modules(path):
            top = module.split(".")[0]
            assert top not in FORBIDDEN_IN_RULES, f"{path.relative_to(ROOT)} imports {module}"
            if top == "referee":
                assert module.startswith("referee.games"), f"{path} imports {module}"


def test_top_level_packages_depend_one_way() -> None:
    # referee must not reach up into the arena (ladders, CLI) or into bots.
    for path in (ROOT / "referee").rglob("*.py"):
        for module in imported_modules(path):
            assert module.split(".")[0] not in ("arena", "sample_bots"), f"{path} imports {module}"
    # botkit is the bot's side: it knows only the wire contract.
    for path in (ROOT / "botkit").rglob("*.py"):
        for module in imported_modules(path):
            assert module.split(".")[0] not in ("arena", "referee", "sample_bots"), path

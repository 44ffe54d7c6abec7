"""The shape of the codebase: a pure rules core, dependencies pointing one way."""

from __future__ import annotations

import ast
import functools
import sys
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


@functools.cache
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
    # netkit is the gRPC plumbing (TLS, listening) that all of them share: it imports none.
    for path in (ROOT / "netkit").rglob("*.py"):
        for module in imported_modules(path):
            top = module.split(".")[0]
            assert top not in ("arena", "referee", "botkit", "sample_bots"), (
                f"{path} imports {module}"
            )


# -- each game a sealed package ----------------------------------------------------------------

GAMES_DIR = ROOT / "referee" / "games"
GAME_PACKAGES = sorted(path.parent.name for path in GAMES_DIR.glob("*/rules.py"))
SHARED_CORE = {"referee.games.api", "referee.games.bits", "referee.games.cards"}
SHARED_CORE |= {"referee.games.views", "referee.games"}
PURE_PARTS = ("rules", "view", "positions")
WIRE_PRIMITIVES = {"referee.codec.base", "referee.codec.common", "referee.codec.wire"}
WIRE_PRIMITIVES |= {"referee.codec.untrusted", "referee.games.cards"}
FIRST_PARTY = ("arena", "referee", "botkit", "netkit", "sample_bots", "benchmarks", "tests")


def runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` outside ``if TYPE_CHECKING:`` blocks (imports for annotations
    only never run)."""
    nodes: list[ast.AST] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        nodes.append(node)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))
    return nodes


@functools.cache
def all_imports(path: Path) -> set[str]:
    """Every absolute import of ``path`` that runs, at any depth, ``from a import b`` also as
    ``a.b``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in runtime_nodes(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def first_party_files() -> list[Path]:
    return [path for top in FIRST_PARTY for path in (ROOT / top).rglob("*.py")]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_rules_view_and_positions_import_only_the_stdlib_and_the_shared_core() -> None:
    for game in GAME_PACKAGES:
        own = {f"referee.games.{game}"} | {f"referee.games.{game}.{p}" for p in PURE_PARTS}
        for part in PURE_PARTS:
            path = GAMES_DIR / game / f"{part}.py"
            assert path.exists(), f"{game} has no {part}.py"
            for module in imported_modules(path):
                top = module.split(".")[0]
                assert top not in FORBIDDEN_IN_RULES, f"{path.relative_to(ROOT)} imports {module}"
                if top == "referee":
                    allowed = module in SHARED_CORE or module in own
                    assert allowed, f"{path.relative_to(ROOT)} imports {module}"


def test_a_codec_reads_only_its_own_view_and_the_wire() -> None:
    for game in GAME_PACKAGES:
        path = GAMES_DIR / game / "codec.py"
        allowed = WIRE_PRIMITIVES | SHARED_CORE | {f"referee.games.{game}.view"}
        for module in imported_modules(path):
            top = module.split(".")[0]
            if top == "referee":
                assert module in allowed, f"{path.relative_to(ROOT)} imports {module}"
            else:
                assert top in ("cardarena", "google") or top in sys.stdlib_module_names, module


def test_outside_a_game_only_its_public_names_are_imported() -> None:
    for path in first_party_files():
        relative = path.relative_to(ROOT).as_posix()
        for game in GAME_PACKAGES:
            if relative.startswith(f"referee/games/{game}/"):
                continue
            inside = f"referee.games.{game}."
            for module in all_imports(path):
                if not module.startswith(inside):
                    continue
                part = module[len(inside) :].split(".")[0]
                if relative == "referee/games/registry.py" and part == "entry":
                    continue  # the one registration line per game
                package = __import__(f"referee.games.{game}", fromlist=["__all__"])
                public = set(getattr(package, "__all__", ()))
                assert part in public, f"{relative} imports {module}: not {game}'s public name"


def state_attribute_writes(path: Path) -> list[str]:
    """Assignments to an attribute of something named like a state (``state.x = …``,
    ``state.hands[0] = …``, ``copy.__dict__ = …``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Attribute):
                    base = ast.unparse(sub.value)
                    if "state" in base.lower() or base in ("clone", "copy", "world"):
                        found.append(
                            f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(target)}"
                        )
    return found


def test_no_state_attribute_is_written_outside_its_game() -> None:
    for path in first_party_files():
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("referee/games/"):
            continue
        writes = state_attribute_writes(path)
        assert not writes, f"attribute writes outside the game: {writes[:5]}"


def test_arena_uses_neither_sample_bots_nor_botkit() -> None:
    # The arena starts sample bots as programs (by module name) and has its own house bot.
    for path in (ROOT / "arena").rglob("*.py"):
        for module in all_imports(path):
            top = module.split(".")[0]
            assert top not in ("sample_bots", "botkit"), (
                f"{path.relative_to(ROOT)} imports {module}"
            )


def test_the_store_does_not_import_the_codecs() -> None:
    for path in (ROOT / "arena" / "store").rglob("*.py"):
        for module in all_imports(path):
            summaries = module.startswith("referee.codec.summaries")
            codec = module.startswith("referee.codec") and not summaries
            game_codec = module.startswith("referee.games") and "codec" in module
            assert not (codec or game_codec), f"{path.relative_to(ROOT)} imports {module}"


def test_no_import_cycles_between_modules() -> None:
    modules = {module_name(path): path for path in first_party_files()}
    graph = {
        name: {module for module in all_imports(path) if module in modules and module != name}
        for name, path in modules.items()
    }
    for name in graph:  # importing a.b imports package a first: not an edge of a cycle
        graph[name] = {m for m in graph[name] if not name.startswith(m + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        stack.append(name)
        for other in sorted(graph[name]):
            if state.get(other) == 1:
                cycle = [*stack[stack.index(other) :], other]
                raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
            if other not in state:
                visit(other)
        stack.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)


def test_game_docs_and_rules_cite_only_the_repository() -> None:
    """A reader of the repository has no ``rules-spec.md`` or ``seeds/*.txt``: each game's
    docs page is its rules reference, and the rules modules point there."""
    pages = sorted((ROOT / "docs" / "games").glob("*.md"))
    rules = sorted(GAMES_DIR.glob("*/rules.py"))
    assert len(pages) == len(rules) == len(GAME_PACKAGES)
    for path in [*pages, *rules]:
        text = path.read_text()
        for outside in ("rules-spec", "seeds/"):
            assert outside not in text, f"{path.relative_to(ROOT)} cites {outside}"
    for path in rules:
        page = path.parent.name.replace("_", "-")
        assert f"docs/games/{page}.md" in path.read_text(), f"{path} does not cite its page"


# -- metrics: the referee's in referee, the arena's in arena ---------------------------------

METRIC_TYPES = {"Counter", "Gauge", "Histogram", "Summary", "Info", "Enum"}
METRIC_MODULES = {"referee/metrics.py", "arena/metrics.py"}


def metric_definitions(path: Path) -> dict[str, str]:
    """``self.NAME = Counter(…)`` (and the other prometheus_client types) in ``path``: each
    attribute's name and the class that defines it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = {}
    for cls in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        for node in ast.walk(cls):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                continue
            called = node.value.func
            if isinstance(called, ast.Name) and called.id in METRIC_TYPES:
                for target in node.targets:
                    if isinstance(target, ast.Attribute):
                        found[target.attr] = cls.name
    return found


def test_metrics_are_defined_only_in_the_two_metrics_modules() -> None:
    for path in first_party_files():
        relative = path.relative_to(ROOT).as_posix()
        if relative in METRIC_MODULES or relative.startswith(("tests/", "benchmarks/")):
            continue
        tree = ast.parse(path.read_text())
        imported = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "prometheus_client"
            for alias in node.names
            if alias.name in METRIC_TYPES
        }
        made = [
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and (
                ast.unparse(node.func) in imported
                or ast.unparse(node.func).startswith("prometheus")
            )
        ]
        assert not made, f"{relative}:{made} makes a metric: define it in a metrics module"


def test_the_referee_defines_only_the_metrics_it_counts() -> None:
    """referee/metrics.py holds only what the match runner updates (through ``GameMetrics``);
    ladders, validation, sweeps, leases, workers and the store count in arena/metrics.py."""
    referee = metric_definitions(ROOT / "referee" / "metrics.py")
    arena = metric_definitions(ROOT / "arena" / "metrics.py")
    assert set(referee.values()) == {"MatchMetrics"}, referee
    assert set(arena.values()) == {"Metrics"}, arena
    assert referee and arena and not set(referee) & set(arena)
    tree = ast.parse((ROOT / "referee" / "metrics.py").read_text())
    game_metrics = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name == "GameMetrics"
    )
    counted = {
        node.attr
        for node in ast.walk(game_metrics)
        if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "metrics"
    }
    assert set(referee) <= counted, f"not the referee's: {sorted(set(referee) - counted)}"


# -- the web draws every game from the registry ------------------------------------------------

WEB = ROOT / "arena" / "web"


def test_the_web_keeps_no_list_of_games() -> None:
    """Outside a game's own frames module (``arena/web/frames/<package>.py``) no web module
    names a game: tables, live rules and pages are found through the registry."""
    from referee.games.registry import GAMES

    names = {entry.name for entry in GAMES} | {entry.name.replace("-", "_") for entry in GAMES}
    for path in WEB.rglob("*.py"):
        relative = path.relative_to(ROOT).as_posix()
        if path.parent.name == "frames" and path.stem in names:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        named = [
            (node.lineno, node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in names
        ] + [
            (node.lineno, node.attr)
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in names
        ]
        imports = [module for module in all_imports(path) if set(module.split(".")) & names]
        assert not named and not imports, f"{relative} names a game: {named or imports}"

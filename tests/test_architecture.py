"""The house's rules, read from the source: the dependency direction, who may import which
client library, and no import cycles (function-level and TYPE_CHECKING imports included)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("board", "bot")


def modules() -> dict[str, Path]:
    """Every module of the product: dotted name -> file."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(name: str, path: Path) -> Iterator[str]:
    """Every module name ``path`` imports, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def graph() -> dict[str, set[str]]:
    """Module -> the product modules it imports."""
    known = modules()
    return {name: {i for i in imports(name, path) if i in known and i != name} for name, path in known.items()}


def test_board_never_imports_bot_or_a_channel_library() -> None:
    for name, path in modules().items():
        if name.split(".")[0] != "board":
            continue
        bad = {i for i in imports(name, path) if i.split(".")[0] in ("bot", "telegram", "httpx")}
        assert not bad, f"{name} imports {sorted(bad)}: board stays channel-agnostic"


def test_only_the_telegram_package_imports_ptb() -> None:
    for name, path in modules().items():
        if name.startswith("bot.channels.telegram."):
            continue
        ptb = {i for i in imports(name, path) if i.split(".")[0] == "telegram"}
        assert not ptb, f"{name} imports {sorted(ptb)}; only bot.channels.telegram may"


def test_no_import_cycles() -> None:
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    assert cycles == [], f"modules importing each other (directly or around a loop): {cycles}"

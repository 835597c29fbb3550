"""The source tree of ``board/`` and ``bot/``, written from the code when the docs site is built (an MkDocs hook).

Each package (a folder with ``__init__.py``; ``migrations`` left out) and each module at the root of ``board/``
and ``bot/`` is one line: its path and the first sentence of its docstring, so the tree on the Development page
shows the folders as they are, whatever moved. ``docs/development.md`` holds the prose; its line
``<!-- source-tree -->`` is replaced by the tree (:func:`on_page_markdown`). ``python docs/hooks/source_tree.py``
prints it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

__all__ = ["MARKER", "ROOTS", "on_page_markdown", "summary", "tree"]

REPO = Path(__file__).resolve().parents[2]
MARKER = "<!-- source-tree -->"
PAGE = "development.md"
ROOTS = ("board", "bot")
_WIDTH = 28
_SENTENCE = re.compile(r"(?<=[a-z)\]`'\"])\.(\s|$)")
_ROLE = re.compile(r":(?:class|mod|func|data|meth|attr):")
_MAX = 100


def summary(path: Path) -> str:
    """The first sentence of a module's docstring, one line (empty when it has none)."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = _ROLE.sub("", " ".join(doc.strip().split("\n\n")[0].split()).replace("``", "`"))
    match = _SENTENCE.search(first)
    first = first[: match.start()] if match else first
    if len(first) <= _MAX:
        return first
    cut = max(first.rfind(", ", 0, _MAX), first.rfind("; ", 0, _MAX), first.rfind(" (", 0, _MAX))
    return (first[:cut] if cut > 0 else first[:_MAX].rsplit(" ", 1)[0]) + " ..."


def _entries(folder: Path, depth: int) -> list[str]:
    lines: list[str] = []
    if depth == 1:  # a root's own modules; deeper packages show as one line each
        for module in sorted(p for p in folder.glob("*.py") if p.name != "__init__.py"):
            lines.append(_line(f"{'  ' * depth}{module.name}", summary(module)))
    for package in sorted(p.parent for p in folder.glob("*/__init__.py")):
        if package.name == "migrations":
            continue
        lines.append(_line(f"{'  ' * depth}{package.name}/", summary(package / "__init__.py")))
        lines.extend(_entries(package, depth + 1))
    return lines


def _line(name: str, text: str) -> str:
    return f"{name:<{_WIDTH}} {text}".rstrip() if len(name) < _WIDTH else f"{name}  {text}".rstrip()


def tree(repo: Path = REPO) -> str:
    """The tree as a fenced text block: each root, its modules, then its packages nested."""
    lines: list[str] = []
    for root in ROOTS:
        lines.append(_line(f"{root}/", summary(repo / root / "__init__.py")))
        lines.extend(_entries(repo / root, 1))
    return "```text\n" + "\n".join(lines) + "\n```\n"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """MkDocs hook: the Development page gets the tree in place of :data:`MARKER`."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"docs/{PAGE} has lost its {MARKER} line: the generated tree has nowhere to go")
    return markdown.replace(MARKER, tree())


if __name__ == "__main__":
    print(tree())

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


def components(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``edges`` with more than one node: the nodes that import
    each other, directly or around a loop (Tarjan's algorithm)."""
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
    return cycles


def test_no_import_cycles() -> None:
    cycles = components(graph())
    assert cycles == [], f"modules importing each other (directly or around a loop): {cycles}"


# -- the size rule (issue 23): no function in board/ over 80 lines or 8 parameters ---------------

MAX_FUNCTION_LINES = 80
MAX_FUNCTION_PARAMETERS = 8

#: Offenders in board/room/ that exist today (``path name``), while another change splits the meeting into
#: a package; nothing outside board/room/ may be listed here, and the list goes when that package lands.
#: Measured when the rule was written: board/room/ had no function over either limit, so it is empty.
ROOM_OFFENDERS_PENDING_SPLIT: frozenset[str] = frozenset()


def function_size(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """(lines, parameters) of one function.

    Lines run from its first decorator (or ``def``) to its last line, docstring and comments
    included. Parameters: positional-only, positional and keyword-only ones each count one;
    ``*args`` and ``**kwargs`` count one each; ``self`` / ``cls`` (the first parameter, so named)
    does not count."""
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    count = len(names) + len(args.kwonlyargs) + (args.vararg is not None) + (args.kwarg is not None)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    assert node.end_lineno is not None
    return node.end_lineno - first + 1, count


def oversized() -> list[tuple[str, str]]:
    """Every function in board/ over the size rule: (``path name``, ``path:line name (lines, parameters)``)."""
    found = []
    for path in sorted((REPO / "board").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            lines, params = function_size(node)
            if lines > MAX_FUNCTION_LINES or params > MAX_FUNCTION_PARAMETERS:
                where = path.relative_to(REPO).as_posix()
                found.append((f"{where} {node.name}",
                              f"{where}:{node.lineno} {node.name} ({lines} lines, {params} parameters)"))
    return found


def test_size_rule_counts_what_it_says() -> None:
    source = "def f(self, a, /, b, *args, c, d=1, **kw):\n    '''doc'''\n    return 1\n"
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    assert function_size(node) == (3, 6)  # a, b, *args, c, d, **kw; self not counted


def test_no_function_in_board_over_80_lines_or_8_parameters() -> None:
    assert all(key.startswith("board/room/") for key in ROOM_OFFENDERS_PENDING_SPLIT)
    rest = [shown for key, shown in oversized() if key not in ROOM_OFFENDERS_PENDING_SPLIT]
    assert not rest, (
        f"functions over {MAX_FUNCTION_LINES} lines or {MAX_FUNCTION_PARAMETERS} parameters (split them into named "
        "steps, or group what they take into a frozen request):\n" + "\n".join(rest)
    )


# -- issue 37: board folders that show the rooms -------------------------------------------------

#: ``board/`` root modules other than these packages' faces; ``service.py`` is not counted while it is
#: turned into ``board/app/`` and ``board/answer/`` (the lead drops it from this set when it is gone).
BOARD_ROOT_NOT_COUNTED = frozenset({"__init__.py", "service.py"})
MAX_BOARD_ROOT_MODULES = 8


def top_package(name: str) -> str | None:
    """``board.<package>`` for a module inside a top-level package of board/, else None (a root module)."""
    parts = name.split(".")
    if parts[0] != "board" or len(parts) < 2 or not (REPO / "board" / parts[1]).is_dir():
        return None
    return f"board.{parts[1]}"


def package_imports() -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> the module imports that make that edge, for board/'s
    top-level packages (function-level and TYPE_CHECKING imports included)."""
    found: dict[tuple[str, str], list[str]] = {}
    for name, deps in graph().items():
        source = top_package(name)
        for dep in sorted(deps):
            target = top_package(dep)
            if source and target and source != target:
                found.setdefault((source, target), []).append(f"{name} -> {dep}")
    return found


def test_no_two_board_packages_import_each_other() -> None:
    edges = package_imports()
    nodes: dict[str, set[str]] = {}
    for source, target in edges:
        nodes.setdefault(source, set()).add(target)
        nodes.setdefault(target, set())
    loops = components(nodes)
    shown = [f"{a} <-> {b}: {edges[a, b][0]} ({len(edges[a, b])}), {edges[b, a][0]} ({len(edges[b, a])})"
             for a, b in sorted(edges) if a < b and (b, a) in edges]
    assert not loops, ("top-level packages of board/ importing each other (directly or around a loop): "
                       f"{loops}\n" + "\n".join(shown))


def test_board_root_holds_at_most_8_modules() -> None:
    root = sorted(p.name for p in (REPO / "board").glob("*.py") if p.name not in BOARD_ROOT_NOT_COUNTED)
    assert len(root) <= MAX_BOARD_ROOT_MODULES, (
        f"board/ root holds {len(root)} modules (at most {MAX_BOARD_ROOT_MODULES}: what every part uses; the rest "
        f"goes into a package named for its concern): {root}")


def face(init: Path) -> tuple[list[str] | None, set[str]]:
    """A package's ``__init__``: its ``__all__`` (None when it has none) and the public names it binds
    (imports and assignments; ``__all__`` itself not counted)."""
    listed: list[str] | None = None
    bound: set[str] = set()
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import | ast.ImportFrom) and getattr(node, "module", None) != "__future__":
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        if isinstance(node, ast.Assign):
            targets = node.targets
        else:
            targets = [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name) and target.id == "__all__":
                assert node.value is not None
                listed = list(ast.literal_eval(node.value))
            elif isinstance(target, ast.Name):
                bound.add(target.id)
    return listed, bound


def test_board_package_faces_match_their_contents() -> None:
    """Every package of board/ has an ``__all__``: a face that binds nothing lists exactly its submodules
    (imported on use); a face that re-exports lists only what it binds."""
    wrong = []
    for init in sorted((REPO / "board").rglob("__init__.py")):
        listed, bound = face(init)
        where = init.parent.relative_to(REPO).as_posix()
        if listed is None:
            wrong.append(f"{where}: no __all__")
        elif not bound:
            parts = {p.stem for p in init.parent.glob("*.py") if p.name != "__init__.py"}
            parts |= {p.parent.name for p in init.parent.glob("*/__init__.py")}
            if set(listed) != parts:
                wrong.append(f"{where}: __all__ lists {sorted(listed)}, its parts are {sorted(parts)}")
        elif not set(listed) <= bound:
            wrong.append(f"{where}: __all__ names what it does not bind: {sorted(set(listed) - bound)}")
    assert not wrong, "package faces that do not match their contents:\n" + "\n".join(wrong)

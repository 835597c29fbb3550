"""The configuration reference, written from the config models when the docs site is built (an MkDocs hook).

Every key of ``sabha.yaml`` is a field of :class:`bot.config.sections.Config` or of a section inside it: this module
walks those pydantic models and writes, per section, a table of key path, type, default and description, so the page
cannot drift from what Sabha accepts. A description is the field's own (``Field(description=...)``), else the
comment ``config.example.yaml`` gives the key (the file ``sabha init`` writes beside a board). ``docs/configuration.md``
holds the prose; the line ``<!-- config-reference -->`` in it is replaced by the tables
(:func:`on_page_markdown`, MkDocs' hook). ``python docs/hooks/config_reference.py`` prints the tables.
"""

from __future__ import annotations

import enum
import json
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # the checkout the docs are built from, not whatever Sabha is installed
    sys.path.insert(0, str(REPO))

from pydantic import BaseModel, SecretStr  # noqa: E402
from pydantic.fields import FieldInfo  # noqa: E402
from pydantic_core import PydanticUndefined  # noqa: E402

from bot.config.sections import Config  # noqa: E402  (the one place the docs reach into the product's config)

__all__ = ["MARKER", "Key", "config_keys", "example_comments", "on_page_markdown", "reference"]

#: The line of docs/configuration.md the generated tables replace.
MARKER = "<!-- config-reference -->"
PAGE = "configuration.md"
EXAMPLE = REPO / "config.example.yaml"
#: What a free-form mapping's key stands for, by the mapping's key path (others: ``<name>``).
_MAP_KEYS = {"board.agents": "<role>", "llm.context.roles": "<role>", "board.rosters": "<roster>",
             "llm.prices": "<model>"}
_ROLE = re.compile(r":(?:class|mod|func|data|meth|attr):")
_EXAMPLE_LINE = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z_][\w-]*):(?P<rest>.*)$")


@dataclass(frozen=True)
class Key:
    """One key of the config file: its dotted path, the section it belongs to, type, default and what it does."""

    path: str
    section: str
    type: str
    default: str
    description: str


def example_comments(text: str) -> dict[str, str]:
    """Key path -> the comment ``config.example.yaml`` writes above or beside that key.

    A comment block directly above a key (no blank line between) and a ``# ...`` after its value count;
    commented-out examples (``#   key: value``, two or more spaces after the ``#``) do not."""
    found: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    block: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            body = stripped[1:]
            block = [*block, body.strip()] if body.strip() and not body.startswith("  ") else []
            continue
        match = _EXAMPLE_LINE.match(line)
        if not match:
            block = []
            continue
        indent = len(match["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, match["key"]))
        trailing = match["rest"].partition(" #")[2].strip()
        comment = " ".join([*block, trailing] if trailing else block)
        if comment:
            found[".".join(key for _, key in stack)] = comment
        block = []
    return found


def _optional(annotation: Any) -> tuple[Any, bool]:
    """``X | None`` -> (X, True); anything else -> (itself, False)."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) < len(get_args(annotation)):
            return (args[0] if len(args) == 1 else Union[tuple(args)]), True  # noqa: UP007
    return annotation, False


def _type_name(annotation: Any) -> str:
    """A type as a reader of YAML thinks of it: ``int``, ``list of str``, ``one of: off, low``."""
    annotation, optional = _optional(annotation)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        name = _type_name(args[0])
    elif origin is Literal:
        name = "one of: " + ", ".join(str(a) for a in args)
    elif isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        name = "one of: " + ", ".join(str(m.value) for m in annotation)
    elif origin in (list, tuple, set, frozenset):
        name = f"list of {_type_name(args[0])}" if args else "list"
    elif origin is dict:
        name = f"mapping of {_type_name(args[0])} to {_type_name(args[1])}" if args else "mapping"
    elif origin in (Union, types.UnionType):
        name = " or ".join(_type_name(a) for a in args)
    elif annotation is SecretStr:
        name = "secret (str)"
    elif annotation is Path:
        name = "path"
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        name = "section"
    else:
        name = getattr(annotation, "__name__", str(annotation))
    return f"{name}, optional" if optional else name


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if value is None or (isinstance(value, SecretStr) and not value.get_secret_value()):
        return "unset"
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return json.dumps(sorted(value) if isinstance(value, (set, frozenset)) else value, default=str)
    return str(value) if str(value) else '""'


def _model_in(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The section model a field holds, and whether the field maps names to such sections (``board.agents``)."""
    annotation, _ = _optional(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    if get_origin(annotation) is dict:
        value = get_args(annotation)[1]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return value, True
    return None, False


def _doc(model: type[BaseModel]) -> str:
    """The first paragraph of a section model's docstring, one line, Sphinx roles (``:class:``) dropped."""
    return _ROLE.sub("", " ".join((model.__doc__ or "").strip().split("\n\n")[0].split()))


def config_keys(model: type[BaseModel] = Config, prefix: str = "", section: str = "",
         comments: dict[str, str] | None = None) -> Iterator[Key]:
    """Every key under ``model`` (the whole file by default), a section's own keys before its subsections'."""
    comments = example_comments(EXAMPLE.read_text(encoding="utf-8")) if comments is None else comments
    nested: list[tuple[str, type[BaseModel]]] = []
    for name, field in model.model_fields.items():
        path = f"{prefix}{field.alias or name}"
        inner, mapping = _model_in(field.annotation)
        if inner is not None:
            nested.append((f"{path}.{_MAP_KEYS.get(path, '<name>')}" if mapping else path, inner))
            continue
        description = field.description or comments.get(re.sub(r"\.<[^>]+>", "", path), "")
        yield Key(path, section, _type_name(field.annotation), _default(field), description)
    for path, inner in nested:
        yield Key(path, path, "section", "", _doc(inner))
        yield from config_keys(inner, f"{path}.", path, comments)


def _cell(text: str) -> str:
    """Text for a table cell: pipes escaped, and ``<`` ``>`` outside code spans written as entities (a
    ``<role>`` in prose would otherwise be read as an HTML tag)."""
    parts = text.replace("``", "`").replace("|", "\\|").replace("\n", " ").split("`")
    return "`".join(p if i % 2 else p.replace("<", "&lt;").replace(">", "&gt;") for i, p in enumerate(parts))


def reference() -> str:
    """The reference as Markdown: a level-3 heading and a table per section, in the order of the models."""
    out: list[str] = []
    rows: list[Key] = []

    def flush() -> None:
        if rows:
            out.extend(["", "| key | type | default | what it does |", "|---|---|---|---|"])
            out.extend(f"| `{k.path}` | {_cell(k.type)} | {_cell(k.default)} | {_cell(k.description)} |" for k in rows)
            rows.clear()

    out.extend(["### Top level", "", _cell(_doc(Config))])
    for key in config_keys():
        if key.type == "section":
            flush()
            out.extend(["", f"### `{key.path}`", "", _cell(key.description)])
        else:
            rows.append(key)
    flush()
    return "\n".join(out) + "\n"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """MkDocs hook: the configuration page gets the generated tables in place of :data:`MARKER`."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"docs/{PAGE} has lost its {MARKER} line: the generated reference has nowhere to go")
    return markdown.replace(MARKER, reference())


if __name__ == "__main__":
    print(reference())

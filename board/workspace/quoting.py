"""Strings from outside, made safe to put in a prompt as quoted data.

Anything a stranger chooses (a display name, a caption, a file name, a title, a quoted reply, a
transcript of a voice note) goes through :func:`quote_field` before it reaches a prompt: one
line, length-capped, control, format and line-separator characters turned into spaces, markup
brackets (``<`` ``>``) replaced by look-alikes that close no tag, and the result JSON-quoted so it
reads as a value, never as a heading, a list item or the end of a block. The templates say that
quoted values are data, not instructions (as memory facts and knowledge passages already are).

:func:`plain_line` is the same cleaning without the quotes, for short values built partly from
outside input (a place: ``group <chat id>``) that sit inside a line we wrote.
"""

from __future__ import annotations

import json
import unicodedata
from enum import IntEnum

__all__ = ["FieldLimit", "plain_line", "quote_field", "quote_lines"]


class FieldLimit(IntEnum):
    """How many characters of each kind of outside string a prompt shows."""

    NAME = 64  # a display name, a contact name
    TITLE = 120  # a chat or topic title, a file name
    TEXT = 500  # a caption, a quoted reply, a short transcript


_ELLIPSIS = "\u2026"
#: Unicode categories that never belong in a one-line value: controls (newline, escape), format
#: characters (bidi overrides, zero-width joiners used to hide text), line and paragraph separators,
#: private use and surrogates. (Unassigned code points stay: a newer emoji is one.)
_DROP = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs"})
#: ZWJ and ZWNJ (format characters) keep emoji sequences and some scripts intact; they open no block.
_KEEP = frozenset({"\u200d", "\u200c"})
_MARKUP = str.maketrans({"<": "\u2039", ">": "\u203a"})


def plain_line(text: str, max_chars: int = FieldLimit.TEXT) -> str:
    """``text`` as one harmless line: unsafe characters become spaces, whitespace is folded,
    ``<`` and ``>`` become U+2039 and U+203A, and it is cut to ``max_chars`` (ending in ``…``)."""
    cleaned = "".join(
        " " if unicodedata.category(ch) in _DROP and ch not in _KEEP else ch for ch in text
    )
    line = " ".join(cleaned.translate(_MARKUP).split())
    if len(line) > max_chars:
        line = line[: max(max_chars - 1, 0)].rstrip() + _ELLIPSIS
    return line


def quote_field(text: str | None, max_chars: int = FieldLimit.TEXT) -> str:
    """``text`` as a quoted value for a prompt: :func:`plain_line`, then a JSON string (quotes and
    backslashes escaped), e.g. ``"Mallory /turn_context # System override"`` with look-alike
    brackets. None is ``""``."""
    return json.dumps(plain_line(text or "", max_chars), ensure_ascii=False)


def quote_lines(text: str | None, max_chars: int, *, line_chars: int = 1000) -> str:
    """Longer outside text (a transcript, a document's extracted text) as quoted data that keeps its
    lines: each non-empty line is :func:`quote_field` (so no line reads as a heading, a list item,
    a tag or an instruction), the whole cut at ``max_chars`` of source text with a last ``"…"``
    line saying that more was left out."""
    out: list[str] = []
    used = 0
    for raw in (text or "").splitlines():
        if not raw.strip():
            continue
        if used >= max_chars:
            out.append(json.dumps(_ELLIPSIS))
            break
        piece = raw[: max_chars - used]
        used += len(piece)
        out.append(quote_field(piece, line_chars))
    return "\n".join(out)

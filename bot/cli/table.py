"""Columns for the terminal: text padded by the width a terminal gives it, not by its length.

An emoji such as ``🦉`` or ``♟️`` (a character plus VS-16) takes two cells, a combining
accent none; ``str.ljust`` counts code points and so shifts every column after a wide
character. :func:`width` asks ``wcwidth`` (the standard table of character widths), and
:func:`table` lays out rows under a header with two spaces between columns;
:func:`local_time` shows a stored timestamp as a person reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

__all__ = ["local_time", "pad", "table", "width"]


def width(text: str) -> int:
    """Terminal cells ``text`` takes (a non-printable character counts as one); plain ASCII is counted
    here, anything else by ``wcwidth`` (imported by the first table that needs it: not by ``sabha --help``)."""
    if text.isascii() and text.isprintable():
        return len(text)
    from wcwidth import wcswidth

    cells = wcswidth(text)
    return cells if cells >= 0 else sum(max(wcswidth(ch), 1) for ch in text)


def pad(text: str, cells: int, *, right: bool = False) -> str:
    """``text`` padded with spaces to ``cells`` terminal cells (left-aligned unless ``right``)."""
    fill = " " * max(0, cells - width(text))
    return fill + text if right else text + fill


def table(header: Sequence[str], rows: Sequence[Sequence[str]], *, right: Sequence[int] = ()) -> list[str]:
    """Lines of a table: the header, then the rows, columns as wide as their widest cell.

    Columns whose index is in ``right`` are right-aligned (numbers); the last column is not
    padded, so no line ends in spaces.
    """
    widths = [max(width(str(r[i])) for r in (header, *rows)) for i in range(len(header))]
    lines = []
    for row in (header, *rows):
        cells = [pad(str(cell), widths[i], right=i in right) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
    return lines


def local_time(ts: object) -> str:
    """An ISO timestamp as local ``YYYY-MM-DD HH:MM`` (as given when it is not one)."""
    try:
        moment = datetime.fromisoformat(str(ts))
    except ValueError:
        return str(ts)
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")

"""What a person at a terminal reads: lines wrapped at word boundaries, Sabha's own voice for
system output, and meeting minutes rendered rather than shown as Markdown source.

Only a terminal gets this: when stdout is a pipe or a file, :func:`say` prints the text as it
is (one answer a line, Markdown minutes a program or a file can keep), so scripts see what they
always saw. A terminal wraps a long line wherever its last column falls, mid-word; :func:`wrap`
breaks it at the spaces instead, counting terminal cells (``wcwidth``: a wide emoji is two).

Replies of kind ``command`` and ``error`` (``/help``, ``/roles``, ``/status``, an unknown
command) are the board's system speaking, not the advisor the place routes to, so
:func:`reply_text` prints them without an advisor's label. Minutes are rendered with ``rich``
(imported here, when a meeting ends, never at start-up) by :func:`terminal_minutes`: after the
statements were printed live, the minutes leave out what was already said (the agenda and the
rounds) and keep the decision.
"""

from __future__ import annotations

import re
import shutil
import sys
from typing import TYPE_CHECKING

from bot.cli.common import emit

if TYPE_CHECKING:
    from board.envelope import Button, Reply

__all__ = ["ONCE_REMARK", "SYSTEM_KINDS", "button_line", "columns", "on_terminal", "reply_text", "say",
           "terminal_minutes", "with_button_line", "wrap"]

#: Reply kinds that are the system speaking, printed without an advisor's label.
SYSTEM_KINDS = frozenset({"command", "error"})

#: Sections of the minutes the live statements already showed.
_SAID_LIVE = re.compile(r"^(Agenda|Round \d+)\b")
#: A remark meant for the minutes' readers elsewhere; in the terminal it is noise.
ONCE_REMARK = " (said once here, not on every statement)"


def on_terminal() -> bool:
    """Whether stdout is a terminal (the real one: a prompt may have patched ``sys.stdout``)."""
    stream = sys.__stdout__
    return stream is not None and stream.isatty()


def columns() -> int:
    """The terminal's width in cells, one short of the edge (a line exactly that wide would wrap
    on some terminals before its newline arrives)."""
    return max(20, shutil.get_terminal_size((100, 24)).columns - 1)


def wrap(text: str, cells: int) -> str:
    """``text`` with every line longer than ``cells`` broken at spaces (a word longer than a line
    is cut, as nothing else fits); existing line breaks and leading indentation are kept."""
    from bot.cli.table import width  # here: `sabha --help` imports this module, not wcwidth

    out: list[str] = []
    for line in text.split("\n"):
        if width(line) <= cells:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip(" "))]
        current = indent
        for word in line.split():
            gap = "" if current.strip() == "" else " "
            if width(current) + len(gap) + width(word) <= cells:
                current += gap + word
                continue
            if current.strip():
                out.append(current)
            current = indent + word
            while width(current) > cells:
                cut = _fit(current, cells)
                out.append(current[:cut])
                current = indent + current[cut:]
        out.append(current)
    return "\n".join(out)


def _fit(text: str, cells: int) -> int:
    """How many characters of ``text`` fit in ``cells`` (at least one)."""
    from bot.cli.table import width

    used = 0
    for index, char in enumerate(text):
        used += max(width(char), 0)
        if used > cells:
            return max(index, 1)
    return len(text)


def say(text: str) -> None:
    """Print ``text``: wrapped to the terminal's width on a terminal, as it is otherwise."""
    emit(wrap(text, columns()) if on_terminal() else text)


def reply_text(reply: Reply) -> str:
    """A reply as the terminal shows it: ``<emoji> <Name>: <text>`` for an advisor's answer, the
    bare text for the system's (help, roles, status, errors); its buttons as the commands they send."""
    return with_button_line(reply.text if reply.kind in SYSTEM_KINDS else reply.render(), reply.buttons)


def button_line(buttons: tuple[Button, ...]) -> str:
    """Buttons as the terminal shows them: the commands a press would send, ``[Ratify: /ratify m-1]``."""
    return " ".join(f"[{b.label}: {b.command}]" for b in buttons)


def with_button_line(text: str, buttons: tuple[Button, ...]) -> str:
    """``text`` and, on a line of its own, its buttons (:func:`button_line`), if any."""
    return f"{text}\n{button_line(buttons)}" if buttons else text


def terminal_minutes(markdown: str, *, after_live: bool) -> str:
    """The minutes' Markdown rendered for this terminal (styles, bullets, word-wrapped); with
    ``after_live`` the agenda and rounds (already printed as they were said) and the notes the
    start of the meeting already showed are left out."""
    from io import StringIO

    from rich.console import Console
    from rich.markdown import Markdown

    text = markdown.replace(ONCE_REMARK, "")
    if after_live:
        text = _without_said(text)
    buffer = StringIO()
    console = Console(file=buffer, width=columns(), force_terminal=True, color_system="standard",
                      highlight=False, emoji=False)
    console.print(Markdown(text))
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip().splitlines())


def _without_said(markdown: str) -> str:
    """The minutes without the sections and warning bullets the live output already showed."""
    kept: list[str] = []
    skipping = False
    for line in markdown.splitlines():
        if line.startswith("## "):
            skipping = bool(_SAID_LIVE.match(line[3:].strip()))
        if skipping or line.startswith("- Warning: "):
            continue
        kept.append(line)
    return "\n".join(kept)

"""Text for Discord: Markdown is kept (Discord renders it), a reply is headed by who answers, and a long one is
split into messages of at most :data:`MAX_CHARS` (Discord's limit for a message's content).

:func:`split_text` cuts at a paragraph, else a line, else a space, else anywhere, never inside a surrogate pair;
a fenced code block cut in two is closed at the end of one message and opened again (with its language) at the
start of the next, so both render as code. Mentions are not escaped here: every message is sent with
``allowed_mentions`` none (:mod:`.outbound`), so ``@everyone`` in an answer pings nobody.
"""

from __future__ import annotations

import re

__all__ = ["MAX_CHARS", "headed", "split_text"]

MAX_CHARS = 2000
_FENCE = re.compile(r"^```(\S*)", re.MULTILINE)


def headed(label: str, text: str) -> str:
    """``text`` under the bold name of who answers (``label``: ``<emoji> <Name>``)."""
    return f"**{label}**\n{text}" if label else text


def _cut(text: str, limit: int) -> int:
    """Where to cut ``text`` (longer than ``limit``): after the last paragraph, line or space break within it."""
    window = text[:limit]
    for sep in ("\n\n", "\n", " "):
        at = window.rfind(sep)
        if at > limit // 4:
            return at + len(sep)
    at = limit
    if "\ud800" <= text[at - 1] <= "\udbff":  # never between the halves of a surrogate pair
        at -= 1
    return at


def _open_fence(text: str) -> str | None:
    """The language of a code fence ``text`` leaves open ("" when it names none), else None."""
    fences = _FENCE.findall(text)
    return fences[-1] if len(fences) % 2 else None


def split_text(text: str, limit: int = MAX_CHARS) -> list[str]:
    """``text`` in messages of at most ``limit`` characters (see the module docstring); [] for blank text."""
    if not text.strip():
        return []
    parts: list[str] = []
    rest = text
    reopen = ""
    while rest:
        rest = reopen + rest
        if len(rest) <= limit:
            parts.append(rest)
            break
        room = limit - 4  # space for a closing fence
        at = _cut(rest, room)
        piece, rest = rest[:at], rest[at:]
        lang = _open_fence(piece)
        if lang is not None:
            piece = piece.rstrip("\n") + "\n```"
            reopen = f"```{lang}\n"
        else:
            reopen = ""
        if piece.strip():
            parts.append(piece)
    return parts

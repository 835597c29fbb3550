"""Markdown (what the models write) as WhatsApp text, and long texts split to WhatsApp's limit.

WhatsApp formats ``*bold*``, ``_italic_``, ``~strike~``, `` `code` `` and fenced
```` ``` ```` blocks, ``- `` / ``* `` bullets and ``1. `` numbered lists. :func:`to_whatsapp`
rewrites Markdown into that (``**x**`` -> ``*x*``, ``*x*`` -> ``_x_``, ``~~x~~`` -> ``~x~``,
headings -> bold lines, ``[text](url)`` -> ``text (url)``) and leaves code untouched; it
never fails: text it does not recognise passes as it is. :func:`split_text` cuts a body
over :data:`MAX_BODY` characters at paragraph, then sentence, then word boundaries.

Buttons (:class:`board.envelope.Button`) are interactive reply buttons (``type: interactive``,
``interactive.type: button``: at most 3, a title of at most 20 characters, the id is the button's
command, so a press arrives with it: :mod:`.inbound`). Their message's body holds at most
:data:`MAX_BUTTON_BODY` characters: :func:`with_buttons` sends a longer text as text first and
puts the buttons under its last part when that fits, else under a short line of their own.
"""

from __future__ import annotations

import re
from typing import Any

from board.envelope import Button

__all__ = ["BUTTONS_BODY", "MAX_BODY", "MAX_BUTTON_BODY", "button_message", "headed", "split_text", "to_whatsapp",
           "with_buttons"]

MAX_BODY = 4096  # characters in one text message
MAX_BUTTON_BODY = 1024  # characters in the body of an interactive (reply buttons) message
BUTTONS_BODY = "Choose below (or type the command):"  # the body of buttons sent after a long text

_FENCE = re.compile(r"```.*?```", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.DOTALL)
_ITALIC_STAR = re.compile(r"(?<![*\w])\*(?=[^\s*])([^*\n]+?)(?<=\S)\*(?![*\w])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_BULLET = re.compile(r"^(\s*)[*+•]\s+", re.MULTILINE)
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$", re.MULTILINE)
_HOLD = "\x00{}\x00"
_HELD = re.compile("\x00(\\d+)\x00")
_BOLD_MARK = "\x01"


def to_whatsapp(markdown: str) -> str:
    """``markdown`` in WhatsApp's formatting (see the module docstring)."""
    held: list[str] = []

    def hold(match: re.Match[str]) -> str:
        held.append(match.group(0))
        return _HOLD.format(len(held) - 1)

    text = _FENCE.sub(hold, markdown)
    text = _INLINE_CODE.sub(hold, text)
    text = _RULE.sub("", text)
    text = _BULLET.sub(lambda m: f"{m.group(1)}- ", text)
    text = _HEADING.sub(lambda m: f"{_BOLD_MARK}{m.group(1).strip('*_ ')}{_BOLD_MARK}", text)
    text = _BOLD.sub(lambda m: f"{_BOLD_MARK}{m.group(2)}{_BOLD_MARK}", text)
    text = _ITALIC_STAR.sub(lambda m: f"_{m.group(1)}_", text)
    text = _STRIKE.sub(lambda m: f"~{m.group(1)}~", text)
    text = _LINK.sub(lambda m: m.group(1) if m.group(1) == m.group(2) else f"{m.group(1)} ({m.group(2)})", text)
    text = text.replace("**", "").replace(_BOLD_MARK, "*")
    text = re.sub(r"\n{3,}", "\n\n", text)
    return _HELD.sub(lambda m: held[int(m.group(1))], text).strip()


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def split_text(text: str, limit: int = MAX_BODY) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters: whole paragraphs packed together
    where they fit, a long paragraph cut at sentences, a long sentence at spaces (or hard)."""
    if len(text) <= limit:
        return [text] if text else []
    pieces: list[str] = []
    current = ""
    for unit in _units(text, limit):
        sep = unit[0]
        body = unit[1]
        candidate = f"{current}{sep}{body}" if current else body
        if len(candidate) <= limit:
            current = candidate
        else:
            if current:
                pieces.append(current)
            current = body
    if current:
        pieces.append(current)
    return pieces


def headed(piece: str, heading: str) -> list[str]:
    """``piece`` headed by ``heading`` (a blank line between), in as many messages as that takes: the heading
    stays on the same message as the start of ``piece`` (split at a paragraph it would stand alone)."""
    prefix = f"{heading}\n\n"
    first, *more = split_text(piece, MAX_BODY - len(prefix)) or [""]
    return [prefix + first, *more]


def _units(text: str, limit: int) -> list[tuple[str, str]]:
    """(separator before it, piece) for each paragraph, or sentence/word of a paragraph too long."""
    units: list[tuple[str, str]] = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if len(paragraph) <= limit:
            units.append(("\n\n", paragraph))
            continue
        first = True
        for sentence in _SENTENCE_END.split(paragraph):
            for part in _cut(sentence, limit):
                units.append(("\n\n" if first else " ", part))
                first = False
    return units


def _cut(sentence: str, limit: int) -> list[str]:
    if len(sentence) <= limit:
        return [sentence]
    parts: list[str] = []
    rest = sentence
    while len(rest) > limit:
        at = rest.rfind(" ", 0, limit + 1)
        if at <= 0:
            at = limit
        parts.append(rest[:at].rstrip())
        rest = rest[at:].lstrip()
    if rest:
        parts.append(rest)
    return parts


def button_message(body: str, buttons: tuple[Button, ...]) -> dict[str, Any]:
    """The ``content`` of an interactive reply-buttons message: ``body`` (at most
    :data:`MAX_BUTTON_BODY` characters) and ``buttons``, each replying with its command as its id."""
    if not body or len(body) > MAX_BUTTON_BODY:
        raise ValueError(f"the body of a buttons message is 1 to {MAX_BUTTON_BODY} characters, not {len(body)}")
    return {"type": "interactive", "interactive": {
        "type": "button", "body": {"text": body},
        "action": {"buttons": [{"type": "reply", "reply": {"id": b.command, "title": b.label}} for b in buttons]}}}


def with_buttons(pieces: list[str], buttons: tuple[Button, ...]) -> tuple[list[str], str | None]:
    """(the pieces to send as text, the body of the buttons message to send after them; None
    without buttons): the last piece carries the buttons when it fits in a buttons message."""
    if not buttons:
        return pieces, None
    if pieces and len(pieces[-1]) <= MAX_BUTTON_BODY:
        return pieces[:-1], pieces[-1]
    return pieces, BUTTONS_BODY

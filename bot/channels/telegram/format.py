"""Telegram message formatting: agent Markdown -> plain text + entities, in chunks that fit.

Owns the conversion of an answer into what ``sendMessage`` accepts: telegramify-markdown
turns Markdown (LLM output included) into text plus message entities (UTF-16 offsets,
no parse mode, so Telegram has nothing to "parse"); a bold ``<emoji> <Name>`` header is
prepended; the result is split into chunks of at most 4096 UTF-16 code units, preferring
paragraph, then line, then word boundaries. An entity crossing a cut is clipped into both
chunks, so formatting never "breaks" across messages. Broken Markdown degrades to
literal text; it never raises.

Angle brackets are text. Markdown lets raw HTML through and telegramify drops it, so
``List<String>``, a ``<role>`` placeholder or a quoted ``<script>`` tag would vanish;
before converting, every ``<`` the parser would read as HTML gets a backslash (a Markdown
escape), so the user sees exactly what was written. Code spans, code blocks and autolinks
(``<https://...>``) are parsed as before.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import pyromark
import telegramify_markdown as tm

log = logging.getLogger("sabha.telegram.format")

MAX_MESSAGE_UTF16 = 4096


def _render_config() -> Any:
    """telegramify's defaults, except that an open task (``- [ ]``, e.g. a meeting's action
    items) shows as an empty box ☐: the default ☑ reads as done."""
    try:
        from telegramify_markdown.config import RenderConfig

        config = RenderConfig.isolated()
        config.markdown_symbol.task_uncompleted = "\N{BALLOT BOX}"
        return config
    except (ImportError, AttributeError):  # an older telegramify: keep its defaults
        return None


_CONFIG = _render_config()


def _parse_options() -> Any:
    """The parser options telegramify converts with, so HTML is found where it finds it."""
    try:
        from telegramify_markdown.converter import STANDARD_OPTIONS

        return STANDARD_OPTIONS
    except ImportError:  # a telegramify without the constant: its documented set
        options = pyromark.Options
        return (
            options.ENABLE_TABLES | options.ENABLE_STRIKETHROUGH | options.ENABLE_TASKLISTS | options.ENABLE_MATH
        )


_OPTIONS = _parse_options()


def _html_starts(source: bytes, text: str) -> list[int]:
    """UTF-8 byte offsets of the ``<`` opening each piece of raw HTML the parser sees in
    ``text`` (inline tags and comments; the first line of an HTML block)."""
    starts: list[int] = []
    for payload, span in pyromark.events_with_range(text, options=_OPTIONS):
        if not isinstance(payload, dict):
            continue
        if "InlineHtml" in payload or payload.get("Start") == "HtmlBlock":
            at = source.find(b"<", span["start"], span["end"])
            if at >= 0:
                starts.append(at)
    return starts


def escape_html(markdown: str) -> str:
    """``markdown`` with a backslash before every ``<`` that would be read as raw HTML, so
    it converts to literal text. An escaped ``<`` never opens HTML again, and the rest of
    an HTML block (e.g. a closing ``</script>`` on a later line) is found on the next
    pass; so the loop ends, after a few passes at most in practice."""
    text = markdown
    for _ in range(markdown.count("<") + 1):
        if "<" not in text:
            break
        source = text.encode("utf-8")
        starts = _html_starts(source, text)
        if not starts:
            break
        bounds = [0, *sorted(set(starts)), len(source)]
        text = b"\\".join(source[a:b] for a, b in pairwise(bounds)).decode("utf-8")
    return text


@dataclass(frozen=True)
class Entity:
    """A message entity in UTF-16 units (``type`` as the Bot API names it)."""

    type: str
    offset: int
    length: int
    url: str | None = None
    language: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The Bot API JSON form."""
        data: dict[str, object] = {"type": self.type, "offset": self.offset, "length": self.length}
        if self.url is not None:
            data["url"] = self.url
        if self.language is not None:
            data["language"] = self.language
        return data


@dataclass(frozen=True)
class Chunk:
    """One Telegram message: text and its entities (offsets relative to this text)."""

    text: str
    entities: tuple[Entity, ...] = ()


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (Telegram's unit)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _utf16_offsets(text: str) -> list[int]:
    """``offsets[i]`` = UTF-16 offset of ``text[i]``; one extra entry for the end."""
    if utf16_len(text) == len(text):  # nothing outside the BMP (the common case): one unit per character
        return list(range(len(text) + 1))
    offsets = [0] * (len(text) + 1)
    total = 0
    for i, ch in enumerate(text):
        offsets[i] = total
        total += 2 if ord(ch) > 0xFFFF else 1
    offsets[len(text)] = total
    return offsets


def markdown_to_entities(markdown: str) -> tuple[str, list[Entity]]:
    """Convert Markdown to (plain text, entities); on any converter failure, the raw text."""
    try:
        escaped = escape_html(markdown)
        text, raw = tm.convert(escaped, config=_CONFIG) if _CONFIG is not None else tm.convert(escaped)
    except Exception:  # formatting must never lose an answer
        log.warning("markdown conversion failed; sending the answer as plain text", exc_info=True)
        return markdown.strip(), []
    entities = [
        Entity(e.type, e.offset, e.length, url=e.url, language=e.language)
        for e in raw
        if e.length > 0
    ]
    return _strip(text, entities)


def _strip(text: str, entities: list[Entity]) -> tuple[str, list[Entity]]:
    """Trim surrounding whitespace, shifting and clipping entities to match."""
    lead = len(text) - len(text.lstrip())
    body = text.strip()
    shift = utf16_len(text[:lead])
    size = utf16_len(body)
    kept = []
    for e in entities:
        start = max(e.offset - shift, 0)
        end = min(e.offset + e.length - shift, size)
        if end > start:
            kept.append(Entity(e.type, start, end - start, e.url, e.language))
    return body, kept


def with_header(header: str, text: str, entities: list[Entity]) -> tuple[str, list[Entity]]:
    """Prepend a bold header line (e.g. ``💰 Finance``) to already converted text."""
    header = header.strip()
    if not header:
        return text, entities
    if not text:
        return header, [Entity("bold", 0, utf16_len(header))]
    prefix = header + "\n"
    shift = utf16_len(prefix)
    shifted = [Entity(e.type, e.offset + shift, e.length, e.url, e.language) for e in entities]
    return prefix + text, [Entity("bold", 0, utf16_len(header)), *shifted]


def _cut_point(text: str, start: int, limit_end: int) -> int:
    """Where to end a chunk that starts at ``start`` and may not pass ``limit_end``
    (Python indexes): a paragraph break, else a line break, else a space, else the limit."""
    window = text[start:limit_end]
    floor = len(window) // 3  # never produce a tiny chunk just to hit a boundary
    for sep in ("\n\n", "\n", " "):
        at = window.rfind(sep)
        if at > floor:
            return start + at
    return max(limit_end, start + 1)  # str indexes are code points: no surrogate pair is cut


def split_chunks(text: str, entities: list[Entity], limit: int = MAX_MESSAGE_UTF16) -> list[Chunk]:
    """Split into chunks of at most ``limit`` UTF-16 units; whitespace-only chunks are dropped."""
    if not text.strip():
        return []
    offsets = _utf16_offsets(text)
    if offsets[-1] <= limit:
        return [Chunk(text, tuple(entities))]
    ranges: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        # skip whitespace that would begin a chunk
        while start < len(text) and text[start].isspace():
            start += 1
        if start >= len(text):
            break
        budget = offsets[start] + limit
        if offsets[-1] <= budget:
            ranges.append((start, len(text)))
            break
        limit_end = start
        while limit_end < len(text) and offsets[limit_end + 1] <= budget:
            limit_end += 1
        end = _cut_point(text, start, limit_end)
        ranges.append((start, end))
        start = end
    chunks = []
    for s, e in ranges:
        piece = text[s:e]
        trimmed = piece.rstrip()
        e = s + len(trimmed)
        if not trimmed.strip():
            continue
        u_start, u_end = offsets[s], offsets[e]
        clipped = []
        for ent in entities:
            a, b = max(ent.offset, u_start), min(ent.offset + ent.length, u_end)
            if b > a:
                clipped.append(Entity(ent.type, a - u_start, b - a, ent.url, ent.language))
        chunks.append(Chunk(trimmed, tuple(clipped)))
    return chunks


def render(markdown: str, header: str = "", limit: int = MAX_MESSAGE_UTF16) -> list[Chunk]:
    """An answer as Telegram messages: converted, headed, split. Empty text gives the
    header alone (or nothing when there is no header either)."""
    text, entities = markdown_to_entities(markdown)
    text, entities = with_header(header, text, entities)
    return split_chunks(text, entities, limit)


def plain_chunks(text: str, limit: int = MAX_MESSAGE_UTF16) -> list[Chunk]:
    """Plain text (no entities) split the same way; the fallback after a parse error."""
    return split_chunks(text.strip(), [], limit)

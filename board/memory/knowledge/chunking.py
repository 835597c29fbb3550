"""Turning a document into searchable chunks, each with its source heading.

Markdown is cut at its ATX headings (``#`` to ``######``; front matter dropped, headings
inside fenced code ignored), then each section's paragraphs are packed into chunks of at
most ``max_chars``; a paragraph longer than that is split at lines, then sentences, then
words. Every chunk keeps its heading path (``Title > Section > Subsection``). Plain text
is packed by paragraph under the file's name. PDF text is extracted page by page with
``pypdf`` (pure Python, maintained by the py-pdf project), each page's chunks headed
``<title> > page N``.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePath

__all__ = [
    "DEFAULT_CHUNK_CHARS",
    "MARKDOWN_SUFFIXES",
    "SUPPORTED_SUFFIXES",
    "TEXT_SUFFIXES",
    "Chunk",
    "DocumentError",
    "chunk_document",
    "chunk_markdown",
    "chunk_text",
]

DEFAULT_CHUNK_CHARS = 1200
MARKDOWN_SUFFIXES = (".md", ".markdown")
TEXT_SUFFIXES = (".txt", ".text")
PDF_SUFFIXES = (".pdf",)
SUPPORTED_SUFFIXES = (*MARKDOWN_SUFFIXES, *TEXT_SUFFIXES, *PDF_SUFFIXES)

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class DocumentError(ValueError):
    """A document cannot be indexed; ``str()`` says why and what to do."""


@dataclass(frozen=True)
class Chunk:
    """One searchable piece of a document: its heading path and its text."""

    heading: str
    text: str


def _title_of(name: str) -> str:
    stem = PurePath(name).stem
    return re.sub(r"[_-]+", " ", stem).strip() or stem


def _split_long(text: str, max_chars: int) -> Iterator[str]:
    """``text`` in pieces of at most ``max_chars``: at lines, then sentences, then words."""
    if len(text) <= max_chars:
        yield text
        return
    for separator, pattern in (("\n", re.compile(r"\n")), (" ", _SENTENCE)):
        parts = [p for p in pattern.split(text) if p.strip()]
        if len(parts) > 1:
            yield from _pack(parts, max_chars, separator)
            return
    words = text.split()
    if len(words) > 1:
        yield from _pack(words, max_chars, " ")
        return
    for start in range(0, len(text), max_chars):  # one enormous "word"
        yield text[start:start + max_chars]


def _pack(parts: list[str], max_chars: int, separator: str) -> Iterator[str]:
    """Join ``parts`` greedily into pieces of at most ``max_chars`` (splitting any longer part)."""
    current = ""
    for part in parts:
        for piece in _split_long(part.strip(), max_chars) if len(part) > max_chars else (part.strip(),):
            if not current:
                current = piece
            elif len(current) + len(separator) + len(piece) <= max_chars:
                current = f"{current}{separator}{piece}"
            else:
                yield current
                current = piece
    if current:
        yield current


def _paragraphs(lines: list[str]) -> list[str]:
    """Blank-line separated paragraphs; a fenced code block stays one paragraph."""
    paragraphs: list[str] = []
    current: list[str] = []
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced and not line.strip():
            if current:
                paragraphs.append("\n".join(current).strip())
                current = []
            continue
        current.append(line.rstrip())
    if current:
        paragraphs.append("\n".join(current).strip())
    return [p for p in paragraphs if p]


def _strip_front_matter(lines: list[str]) -> list[str]:
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                return lines[i + 1:]
    return lines


def chunk_markdown(text: str, *, name: str, max_chars: int = DEFAULT_CHUNK_CHARS) -> list[Chunk]:
    """Chunks of a Markdown document called ``name`` (its file name: the title without an H1)."""
    lines = _strip_front_matter(text.splitlines())
    sections: list[tuple[list[str], list[str]]] = []  # (heading path, body lines)
    path: list[tuple[int, str]] = []
    body: list[str] = []
    fenced = False
    title: str | None = None
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match is None:
            body.append(line)
            continue
        sections.append(([h for _, h in path], body))
        level, heading = len(match.group(1)), match.group(2).strip()
        if level == 1 and title is None:
            title = heading
        path = [(lvl, h) for lvl, h in path if lvl < level] + [(level, heading)]
        body = []
    sections.append(([h for _, h in path], body))

    title = title or _title_of(name)
    chunks: list[Chunk] = []
    for headings, section in sections:
        if headings and headings[0] == title:
            headings = headings[1:]
        heading = " > ".join([title, *headings])
        for piece in _pack(_paragraphs(section), max_chars, "\n\n"):
            chunks.append(Chunk(heading, piece))
    return chunks


def chunk_text(text: str, *, name: str, heading: str | None = None,
               max_chars: int = DEFAULT_CHUNK_CHARS) -> list[Chunk]:
    """Chunks of plain text: paragraphs packed under ``heading`` (default: the file's title)."""
    head = heading or _title_of(name)
    return [Chunk(head, piece) for piece in _pack(_paragraphs(text.splitlines()), max_chars, "\n\n")]


def _decode(data: bytes, name: str) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"{name} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc
    if "\x00" in text:
        raise DocumentError(f"{name} contains NUL bytes: it looks binary, not text")
    return text


def _chunk_pdf(data: bytes, name: str, max_chars: int) -> list[Chunk]:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError as exc:  # an install without the dependency
        raise DocumentError(f"{name}: reading PDF needs pypdf (pip install pypdf)") from exc
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise DocumentError(f"{name} is an encrypted PDF; save a copy without a password")
        title = _title_of(name)
        meta = reader.metadata
        if meta is not None and meta.title and str(meta.title).strip():
            title = str(meta.title).strip()
        chunks: list[Chunk] = []
        for number, page in enumerate(reader.pages, start=1):
            text = page.extract_text() or ""
            chunks.extend(chunk_text(text, name=name, heading=f"{title} > page {number}", max_chars=max_chars))
    except DocumentError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise DocumentError(f"{name} is not a readable PDF ({exc})") from exc
    return chunks


def chunk_document(name: str, data: bytes, *, max_chars: int = DEFAULT_CHUNK_CHARS) -> list[Chunk]:
    """Chunks of the file ``name`` (its suffix picks the format) holding ``data``."""
    suffix = PurePath(name).suffix.lower()
    if suffix in MARKDOWN_SUFFIXES:
        return chunk_markdown(_decode(data, name), name=name, max_chars=max_chars)
    if suffix in TEXT_SUFFIXES:
        return chunk_text(_decode(data, name), name=name, max_chars=max_chars)
    if suffix in PDF_SUFFIXES:
        return _chunk_pdf(data, name, max_chars)
    raise DocumentError(f"{name}: {suffix or 'files without a suffix'} are not indexed; "
                        f"use one of {', '.join(SUPPORTED_SUFFIXES)}")

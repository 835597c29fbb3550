"""Text out of a document, one reader per format, within page, row and character caps.

Each reader writes into an :class:`_Out` that stops at ``max_chars``; PDF pages are marked
``[p.4]`` and spreadsheet sheets ``[sheet Revenue]`` on lines of their own (so a citation can
name the page, and :func:`board.media.library.sections` can cut the text back into pages);
spreadsheet and table rows become CSV lines. What a cap left out is said in a last line.
A sheet's declared dimension is not trusted (calamine's ``issue_174.xlsx`` claims every cell
of Excel, ``A1:XFD1048576``): its rows are read as stored. A file with nothing to read is
said in the words of its kind: a spreadsheet "has no cells with content", a PDF "no text (a
scan or images only?)".

These functions block and trust nothing they read, so :mod:`board.media.isolate` runs them in
a child process with a time and memory limit; a damaged, encrypted or hostile file raises
:class:`MediaProblem` (``UNREADABLE``) with a sentence for the sender.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from board.media.problems import MediaProblem, Problem
from board.media.sniff import DocFormat
from board.media.zipguard import MAX_RATIO, MAX_UNPACKED_BYTES, check_zip

__all__ = ["ExtractLimits", "Extracted", "extract", "page_marker", "sheet_marker"]


@dataclass(frozen=True)
class ExtractLimits:
    """How much of a document is read (``media.doc_max_pages`` / ``doc_max_rows`` / ``doc_max_chars``)
    and what a ZIP container may unpack to."""

    max_pages: int = 200
    max_rows: int = 5000
    max_chars: int = 400_000
    zip_max_bytes: int = MAX_UNPACKED_BYTES
    zip_max_ratio: float = MAX_RATIO


@dataclass(frozen=True)
class Extracted:
    """A document's text (markers included) and whether a cap cut it."""

    text: str
    truncated: bool = False


def page_marker(number: int) -> str:
    """The line that starts page ``number`` of a PDF: ``[p.4]``."""
    return f"[p.{number}]"


def sheet_marker(title: str) -> str:
    """The line that starts a spreadsheet's sheet: ``[sheet Revenue]``."""
    return f"[sheet {' '.join(title.split())}]"


class _Full(Exception):
    """``max_chars`` reached: stop reading."""


class _Out:
    """Text gathered up to ``max_chars``; :meth:`add` raises :class:`_Full` when past it."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.parts: list[str] = []
        self.chars = 0
        self.notes: list[str] = []
        self.has_text = False  # more than markers

    def add(self, text: str, *, marker: bool = False) -> None:
        text = text.strip("\n")
        if not text.strip():
            return
        self.has_text = self.has_text or not marker
        room = self.max_chars - self.chars
        if len(text) > room:
            self.parts.append(text[:room])
            self.chars = self.max_chars
            self.notes.append(f"only the first {self.max_chars} characters were read (media.doc_max_chars)")
            raise _Full
        self.parts.append(text)
        self.chars += len(text) + 1

    def result(self) -> Extracted:
        lines = list(self.parts)
        if self.notes:
            lines.append(f"[{'; '.join(self.notes)}]")
        return Extracted("\n".join(lines), truncated=bool(self.notes))


def _csv_line(values: Iterable[Any]) -> str:
    cells = ["" if v is None else str(v) for v in values]
    while cells and not cells[-1].strip():
        cells.pop()
    if not cells:
        return ""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(cells)
    return buffer.getvalue()


def _pdf(path: Path, label: str, limits: ExtractLimits, out: _Out) -> None:
    from pypdf import PdfReader

    reader = PdfReader(path)
    if reader.is_encrypted:
        try:
            opened = bool(reader.decrypt(""))  # "encrypted" with an empty password: restrictions only, readable
        except Exception:  # noqa: BLE001 - an algorithm pypdf cannot do here is the same answer
            opened = False
        if not opened:
            raise MediaProblem(Problem.UNREADABLE, f"{label} is password-protected; send a copy without a "
                               "password (or paste the part you want me to read)")
    total = len(reader.pages)
    for number in range(1, min(total, limits.max_pages) + 1):
        out.add(page_marker(number), marker=True)
        out.add(reader.pages[number - 1].extract_text() or "")
    if total > limits.max_pages:
        out.notes.append(f"only the first {limits.max_pages} of {total} pages were read (media.doc_max_pages)")


def _docx(path: Path, label: str, limits: ExtractLimits, out: _Out) -> None:
    import docx
    from docx.table import Table

    check_zip(path, label, max_bytes=limits.zip_max_bytes, max_ratio=limits.zip_max_ratio)
    document = docx.Document(str(path))
    rows = 0
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            for row in block.rows:
                if rows >= limits.max_rows:
                    out.notes.append(f"only the first {limits.max_rows} table rows were read (media.doc_max_rows)")
                    return
                rows += 1
                out.add(_csv_line(cell.text for cell in row.cells))
        else:
            out.add(block.text)


def _xlsx(path: Path, label: str, limits: ExtractLimits, out: _Out) -> None:
    import openpyxl  # type: ignore[import-untyped]

    check_zip(path, label, max_bytes=limits.zip_max_bytes, max_ratio=limits.zip_max_ratio)
    with path.open("rb") as fh:  # a file object: openpyxl refuses a path without an .xlsx suffix (a blob's)
        _sheets(openpyxl.load_workbook(fh, read_only=True, data_only=True), label, limits, out)


def _sheets(book: Any, label: str, limits: ExtractLimits, out: _Out) -> None:
    rows = 0
    try:
        if not book.worksheets:  # openpyxl finds none in a "Strict Open XML" workbook
            raise MediaProblem(Problem.UNREADABLE, f"{label} has no worksheet I can read (a workbook saved as "
                               "\"Strict Open XML Spreadsheet\" looks like this); save it as \"Excel Workbook "
                               "(.xlsx)\" and send it again")
        for sheet in book.worksheets:
            out.add(sheet_marker(sheet.title), marker=True)
            if hasattr(sheet, "reset_dimensions"):  # read as stored: a wrong dimension pads millions of empty rows
                sheet.reset_dimensions()
            rows = _add_rows(sheet.iter_rows(values_only=True), rows, limits, out)
            if rows > limits.max_rows:
                return
    finally:
        book.close()


def _add_rows(rows: Iterable[Iterable[Any]], counted: int, limits: ExtractLimits, out: _Out) -> int:
    """Add each non-empty row as a CSV line until ``limits.max_rows`` rows in all were read (then a note
    says so); returns the rows read so far (past ``max_rows``: the cap was hit)."""
    for values in rows:
        line = _csv_line(values)
        if not line:
            continue
        if counted >= limits.max_rows:
            out.notes.append(f"only the first {limits.max_rows} rows were read (media.doc_max_rows)")
            return counted + 1
        counted += 1
        out.add(line)
    return counted


def _read_text(path: Path, max_chars: int) -> str:
    with path.open("rb") as fh:
        data = fh.read(max_chars * 4 + 4)  # UTF-8 is at most 4 bytes a character
    return data.decode("utf-8-sig", "replace")


def _csv(path: Path, label: str, limits: ExtractLimits, out: _Out) -> None:
    text = _read_text(path, limits.max_chars)
    try:
        dialect: Any = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    _add_rows(csv.reader(io.StringIO(text), dialect), 0, limits, out)


def _text(path: Path, label: str, limits: ExtractLimits, out: _Out) -> None:
    out.add(_read_text(path, limits.max_chars))


#: What is said of a file of each format with nothing in it to read (after its label).
_NOTHING = {
    DocFormat.PDF: "has no text I can read (a scan or images only?); send a version with text, or describe what "
                   "it shows",
    DocFormat.XLSX: "has no cells with content (every sheet is empty); check that you sent the right file",
    DocFormat.CSV: "has no cells with content; check that you sent the right file",
    DocFormat.DOCX: "has no text I can read (only pictures, or empty?); send a version with text, or describe "
                    "what it shows",
}
_NOTHING_ELSE = "is empty (nothing but blank lines); check that you sent the right file"

_READERS = {DocFormat.PDF: _pdf, DocFormat.DOCX: _docx, DocFormat.XLSX: _xlsx, DocFormat.CSV: _csv,
            DocFormat.TEXT: _text, DocFormat.MARKDOWN: _text}


def extract(path: Path, fmt: DocFormat, label: str, limits: ExtractLimits) -> Extracted:
    """The text of the ``fmt`` file at ``path`` within ``limits``.

    Raises :class:`MediaProblem` (``UNREADABLE``, naming ``label``) for an encrypted, damaged or
    hostile file; blocks (run it through :func:`board.media.isolate.extract_isolated`)."""
    out = _Out(limits.max_chars)
    try:
        _READERS[fmt](path, label, limits, out)
    except _Full:
        pass
    except MediaProblem:
        raise
    except MemoryError:
        raise MediaProblem(Problem.UNREADABLE, f"{label} needs more memory to read than a document may use; "
                           "send a smaller file") from None
    except Exception as exc:  # noqa: BLE001 - every parser error of a hostile file is "damaged"
        raise MediaProblem(Problem.UNREADABLE, f"{label} could not be read as {fmt.value.upper()}: it looks "
                           f"damaged ({type(exc).__name__}); open it and save it again, then resend it") from None
    if not out.has_text:
        raise MediaProblem(Problem.UNREADABLE, f"{label} {_NOTHING.get(fmt, _NOTHING_ELSE)}")
    return out.result()

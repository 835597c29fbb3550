"""Which document format a file really is: by its declared type and name AND by its bytes.

A file named ``deck.pdf`` (or sent as ``application/pdf``) whose bytes do not start like a PDF
is refused with a clear sentence, never handed to a parser meant for something else. A ZIP
sent as a Word or Excel file is told apart the way openpyxl and python-docx find their main
part: by the content type ``[Content_Types].xml`` gives it (an Excel workbook, macro-enabled or a
template likewise; a package may keep its parts anywhere, e.g. calamine's
``minimal_package.xlsx`` has them at the root), else by its folders (``word/`` or ``xl/``).
Plain text is accepted only when it decodes as UTF-8 and holds no NUL byte.
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from board.media.problems import MediaProblem, Problem

if TYPE_CHECKING:
    import zipfile

__all__ = ["READERS_SAY", "DocFormat", "sniff"]

_HEAD_BYTES = 8192


class DocFormat(StrEnum):
    """The document formats Sabha reads."""

    PDF = "pdf"
    DOCX = "docx"
    XLSX = "xlsx"
    CSV = "csv"
    TEXT = "text"
    MARKDOWN = "markdown"


_BY_SUFFIX: dict[str, DocFormat] = {
    ".pdf": DocFormat.PDF, ".docx": DocFormat.DOCX, ".xlsx": DocFormat.XLSX, ".xlsm": DocFormat.XLSX,
    ".csv": DocFormat.CSV, ".txt": DocFormat.TEXT, ".text": DocFormat.TEXT, ".log": DocFormat.TEXT,
    ".md": DocFormat.MARKDOWN, ".markdown": DocFormat.MARKDOWN,
}
_BY_MIME: dict[str, DocFormat] = {
    "application/pdf": DocFormat.PDF,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": DocFormat.DOCX,
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": DocFormat.XLSX,
    "application/vnd.ms-excel.sheet.macroenabled.12": DocFormat.XLSX,
    "text/csv": DocFormat.CSV, "application/csv": DocFormat.CSV, "text/comma-separated-values": DocFormat.CSV,
    "text/plain": DocFormat.TEXT, "text/markdown": DocFormat.MARKDOWN, "text/x-markdown": DocFormat.MARKDOWN,
}
#: What people call each format when telling them what a file is not.
_SPOKEN = {DocFormat.PDF: "a PDF", DocFormat.DOCX: "a Word document (DOCX)",
           DocFormat.XLSX: "an Excel workbook (XLSX)", DocFormat.CSV: "a CSV file", DocFormat.TEXT: "a text file",
           DocFormat.MARKDOWN: "a Markdown file"}
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # .doc / .xls (OLE2): not read
#: What the document reader takes, said to a sender whose file is not one of them.
READERS_SAY = "send a PDF, DOCX, XLSX, CSV, TXT or MD file"
_TEXTUAL = (DocFormat.CSV, DocFormat.TEXT, DocFormat.MARKDOWN)
_CONTENT_TYPES = "[Content_Types].xml"
_CONTENT_TYPES_BYTES = 1024 * 1024  # a real one is a few KB; more is not read (a bomb stays packed)
_CONTENT_TYPE = re.compile(rb"""ContentType\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
#: The main part's content type of each package kind (openpyxl's and python-docx's, lowercased).
_MAIN_PARTS: dict[str, DocFormat] = {
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml": DocFormat.XLSX,
    "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml": DocFormat.XLSX,
    "application/vnd.ms-excel.sheet.macroenabled.main+xml": DocFormat.XLSX,
    "application/vnd.ms-excel.template.macroenabled.main+xml": DocFormat.XLSX,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml": DocFormat.DOCX,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml": DocFormat.DOCX,
    "application/vnd.ms-word.document.macroenabled.main+xml": DocFormat.DOCX,
    "application/vnd.ms-word.template.macroenabledtemplate.main+xml": DocFormat.DOCX,
}


def _declared(name: str | None, mime: str | None) -> DocFormat | None:
    """What the sender's name and type say (the name's suffix first: services often say octet-stream)."""
    suffix = PurePath(name or "").suffix.lower()
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    base = (mime or "").split(";")[0].strip().lower()
    if base in _BY_MIME:
        return _BY_MIME[base]
    if base.startswith("text/"):
        return DocFormat.TEXT
    return None


def _zip_kind(path: Path) -> DocFormat | None:
    """DOCX or XLSX by the parts inside the ZIP (only its directory is read), else None."""
    import zipfile  # here: a turn without a document never needs it (tests/test_fast_start.py)

    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            declared = _main_part(archive) if _CONTENT_TYPES in names else None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError):  # RuntimeError: encrypted entry
        return None
    if declared is not None:
        return declared
    if any(n.startswith("word/") for n in names):
        return DocFormat.DOCX
    if any(n.startswith("xl/") for n in names):
        return DocFormat.XLSX
    return None


def _main_part(archive: zipfile.ZipFile) -> DocFormat | None:
    """What ``[Content_Types].xml`` says the package's main part is (its first ``_CONTENT_TYPES_BYTES``)."""
    import zlib

    try:
        with archive.open(_CONTENT_TYPES) as part:
            types = part.read(_CONTENT_TYPES_BYTES)
    except (zlib.error, NotImplementedError):  # a damaged or unknown compression: the folders decide
        return None
    for found in _CONTENT_TYPE.findall(types):
        kind = _MAIN_PARTS.get(found.decode("ascii", "replace").strip().lower())
        if kind is not None:
            return kind
    return None


def _content(path: Path, head: bytes) -> DocFormat | None:
    """What the bytes are, as far as a reader here cares."""
    if head.lstrip(b"\x00\t\n\r\f ")[:5] == b"%PDF-" or b"%PDF-" in head[:1024]:
        return DocFormat.PDF
    if head.startswith(b"PK\x03\x04"):
        return _zip_kind(path)
    if b"\x00" in head:
        return None
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not a multi-byte character cut by the head's end
            return None
    return DocFormat.TEXT


def sniff(path: Path, *, name: str | None, mime: str | None, label: str) -> DocFormat:
    """The format of the file at ``path``, sent as ``name`` / ``mime`` (``label`` names it to the sender).

    Raises :class:`MediaProblem`: ``UNREADABLE`` when the bytes are not what the name or type
    says, ``UNSUPPORTED`` for a format Sabha does not read (old .doc/.xls, images sent as files ...)."""
    with path.open("rb") as fh:
        head = fh.read(_HEAD_BYTES)
    declared = _declared(name, mime)
    found = _content(path, head)
    if not head:
        raise MediaProblem(Problem.UNREADABLE, f"{label} is empty")
    if declared is None:
        if found is None:
            what = "an old Office file (.doc/.xls)" if head.startswith(_OLE2_MAGIC) else (mime or "this kind of file")
            raise MediaProblem(Problem.UNSUPPORTED, f"I cannot read {label}: {what} is not a format I read; "
                               f"{READERS_SAY}")
        return found
    if declared in _TEXTUAL and found is DocFormat.TEXT:
        return declared
    if declared is found:
        return declared
    if head.startswith(_OLE2_MAGIC) and declared in (DocFormat.DOCX, DocFormat.XLSX):
        raise MediaProblem(Problem.UNSUPPORTED, f"{label} is password-protected or an old-style Office file "
                           "(.doc/.xls): remove the password, or save it as .docx / .xlsx (or PDF), and send it again")
    actually = _SPOKEN[found] if found is not None else "something else (binary data)"
    raise MediaProblem(Problem.UNREADABLE, f"{label} is not {_SPOKEN[declared]}: its content is {actually}; "
                       "I did not open it. Check the file and send it again")

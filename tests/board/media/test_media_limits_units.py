"""What is refused on its declaration alone (board/media/declared.py), and what is still fetched and sniffed:
a vague or text-like declaration must never stop a file the readers take."""

from __future__ import annotations

import pytest

from board.media.attachment import Attachment, MediaKind, MediaRef
from board.media.declared import refused_before_download
from board.media.problems import Problem
from board.media.settings import MediaSettings

REF = MediaRef(channel="whatsapp", id="1")


def _doc(name: str | None, mime: str | None, size: int | None = None) -> Attachment:
    return Attachment(kind=MediaKind.DOCUMENT, name=name, mime=mime, size=size, source=REF)


@pytest.mark.parametrize(("name", "mime"), [
    ("photos.zip", "application/zip"), ("setup.exe", "application/octet-stream"), ("clip.mp4", "video/mp4"),
    (None, "audio/mpeg"), ("scan.jpg", "image/jpeg"), ("old.xls", None), ("deck.pptx", None),
])
def test_a_document_no_reader_takes_is_refused_on_its_declaration(name: str | None, mime: str | None) -> None:
    refused = refused_before_download(_doc(name, mime), "whatsapp", MediaSettings())
    assert refused is not None and refused.problem is Problem.UNSUPPORTED
    assert "send a PDF, DOCX, XLSX, CSV, TXT or MD file" in refused.text or ".docx / .xlsx" in refused.text \
        or "send it as a photo" in refused.text


@pytest.mark.parametrize(("name", "mime"), [
    ("deck.pdf", "application/pdf"), ("notes", "application/octet-stream"), (None, None), ("data.json", None),
    ("data.json", "application/json"), ("main.py", "text/x-python"), ("report.pdf", "application/octet-stream"),
    ("sales.csv", "application/vnd.ms-excel"),  # Windows sends CSV as Excel's type: the name wins
])
def test_what_may_be_readable_is_fetched_and_sniffed(name: str | None, mime: str | None) -> None:
    assert refused_before_download(_doc(name, mime), "whatsapp", MediaSettings()) is None


def test_a_declared_size_over_the_kinds_cap_and_an_unopenable_picture_type_are_refused() -> None:
    big = refused_before_download(_doc("deck.pdf", "application/pdf", size=30 * 2**20), "telegram", MediaSettings())
    assert big is not None and big.problem is Problem.TOO_LARGE and "the limit is 20.0 MB" in big.text
    heic = Attachment(kind=MediaKind.IMAGE, mime="image/heic", source=REF)
    refused = refused_before_download(heic, "whatsapp", MediaSettings())
    assert refused is not None and "image/heic is not a picture format I know" in refused.text
    for mime in ("image/jpeg", "image/png", "image/webp", None):
        picture = Attachment(kind=MediaKind.IMAGE, mime=mime, source=REF)
        assert refused_before_download(picture, "whatsapp", MediaSettings()) is None

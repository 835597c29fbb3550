"""Excel workbooks that openpyxl reads are read, on a real ``sabha run`` (issue items 10 and 14).

* calamine's ``tests/minimal_package.xlsx`` (tafia/calamine, MIT): a package whose parts sit at the
  ZIP's root (``workbook.xml``, ``sheet1.xml``: no ``xl/`` folder); ``[Content_Types].xml`` names
  the workbook part, as it does for openpyxl. It was refused on both channels as "not an Excel
  workbook ... binary data".
* calamine's ``tests/issue_174.xlsx``: its sheet claims the dimension ``A1:XFD1048576`` (every cell
  of a sheet); read-only openpyxl trusted it and padded a million empty rows of 16384 cells, so
  reading it ran into ``media.extract_timeout_s``.
* a workbook with no cell holding anything is said to be just that, not "a scan or images only";
  calamine's ``strict_iso_paths.xlsx`` (Strict Open XML, where openpyxl finds no worksheet) is
  said to need saving as an ordinary Excel workbook.

Files go through the fake Bot API (``getFile`` and the download route) and the fake Graph API
(``GET /{media-id}`` and the bytes); the model answers with what it received, so the answer shows
what reached it. The fixtures are copied from calamine into ``tests/data/readers/``.
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import openpyxl  # type: ignore[import-untyped]
import pytest

from board.media.extract import ExtractLimits, extract
from board.media.sniff import DocFormat, sniff
from tests.support import readers as readers_support
from tests.support.daemon import SabhaProcess
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI, document
from tests.support.readers import XLSX_MIME, Daemon, marker_answered, media_message, telegram_answer
from tests.support.telegram import OWNER

tg, wa = readers_support.tg, readers_support.wa  # the fixtures

DATA = Path(__file__).parents[2] / "data" / "readers"
MINIMAL = DATA / "minimal_package.xlsx"
EVERY_CELL = DATA / "issue_174.xlsx"
STRICT = DATA / "strict_iso_paths.xlsx"  # saved as "Strict Open XML Spreadsheet": openpyxl finds no sheet in it
#: What the first rows of minimal_package.xlsx say (openpyxl reads them).
MINIMAL_WORDS = ("ARREST BOOKINGS for 01/30/17", "BKG_NUM,BKG_DT,BKG_TM")


def blank_workbook() -> bytes:
    """A workbook of two sheets, nothing in any cell (one formatted, one untouched)."""
    book = openpyxl.Workbook()
    book.active.title = "Plan"
    book.active["B2"].number_format = "0.00"  # a styled cell with no value
    book.create_sheet("Notes")
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


# -- openpyxl reads it: so does Sabha ---------------------------------------------------------------


@pytest.mark.parametrize("path", [MINIMAL, EVERY_CELL], ids=lambda p: p.name)
def test_every_fixture_workbook_is_sniffed_as_xlsx_and_read_like_openpyxl(path: Path) -> None:
    with path.open("rb") as fh:
        book = openpyxl.load_workbook(fh, read_only=True, data_only=True)
        book.close()
    fmt = sniff(path, name=path.name, mime=XLSX_MIME, label=path.name)
    assert fmt is DocFormat.XLSX
    assert sniff(path, name=None, mime="application/octet-stream", label=path.name) is DocFormat.XLSX
    assert "[sheet " in extract(path, fmt, path.name, ExtractLimits()).text


async def test_calamines_minimal_package_is_read_on_telegram(fake: FakeTelegramAPI, tg: SabhaProcess) -> None:
    sheet = fake.add_file(MINIMAL.read_bytes(), name="minimal_package.xlsx")
    fake.push_media(OWNER, OWNER, document(sheet, "minimal_package.xlsx", XLSX_MIME), caption="CAP-MIN summarise")
    answer = await telegram_answer(fake, "CAP-MIN summarise")
    assert "not an Excel workbook" not in answer, answer
    assert "minimal_package.xlsx" in answer
    for words in MINIMAL_WORDS:
        assert words in answer, answer
    await marker_answered(fake)


async def test_calamines_minimal_package_is_read_on_whatsapp(wa: Daemon, fake_graph: FakeGraphAPI) -> None:
    await wa.start()
    data = MINIMAL.read_bytes()
    media_id = fake_graph.add_media(data, XLSX_MIME)
    item = media_message("document", media_id, sha256=hashlib.sha256(data).hexdigest(), mime_type=XLSX_MIME,
                         filename="minimal_package.xlsx", caption="CAP-MIN summarise")
    await wa.post(item)
    answer = await wa.answer_to(item["id"], timeout=90)
    assert "not an Excel workbook" not in answer, answer
    assert "CAP-MIN summarise" in answer
    for words in MINIMAL_WORDS:
        assert words in answer, answer
    await wa.marker()
    assert len(wa.answers_to(item["id"])) == 1


@pytest.mark.parametrize("tg", [["extract_timeout_s: 20"]], indirect=True)
async def test_a_sheet_claiming_every_cell_of_excel_is_read_not_timed_out(fake: FakeTelegramAPI,
                                                                           tg: SabhaProcess) -> None:
    sheet = fake.add_file(EVERY_CELL.read_bytes(), name="issue_174.xlsx")
    fake.push_media(OWNER, OWNER, document(sheet, "issue_174.xlsx", XLSX_MIME), caption="CAP-WIDE what is here?")
    answer = await telegram_answer(fake, "CAP-WIDE what is here?")
    assert "took too long" not in answer, answer
    assert "[sheet " in answer, answer
    await marker_answered(fake)


# -- nothing in it --------------------------------------------------------------------------------


async def test_an_empty_spreadsheet_is_said_to_have_no_cells_with_content(fake: FakeTelegramAPI,
                                                                         tg: SabhaProcess) -> None:
    sheet = fake.add_file(blank_workbook(), name="budget.xlsx")
    fake.push_media(OWNER, OWNER, document(sheet, "budget.xlsx", XLSX_MIME), caption="CAP-EMPTY check my budget")
    answer = await telegram_answer(fake, "CAP-EMPTY check my budget")  # the caption is still answered
    assert "scan" not in answer and "images only" not in answer, answer
    assert "budget.xlsx has no cells with content" in answer, answer
    await marker_answered(fake)


async def test_a_strict_open_xml_workbook_says_to_save_it_as_an_excel_workbook(fake: FakeTelegramAPI,
                                                                              tg: SabhaProcess) -> None:
    sheet = fake.add_file(STRICT.read_bytes(), name="strict.xlsx")
    fake.push_media(OWNER, OWNER, document(sheet, "strict.xlsx", XLSX_MIME), caption="CAP-STRICT look")
    answer = await telegram_answer(fake, "CAP-STRICT look")
    assert "strict.xlsx has no worksheet I can read" in answer and "Excel Workbook (.xlsx)" in answer, answer
    await marker_answered(fake)


def test_the_fixtures_are_calamines_files() -> None:
    """The copies are byte-for-byte what calamine ships (so a reader can fetch them again)."""
    sizes = {p.name: os.path.getsize(p) for p in DATA.glob("*.xlsx")}
    assert sizes == {"minimal_package.xlsx": 26928, "issue_174.xlsx": 145592, "strict_iso_paths.xlsx": 21205}

"""Documents sent to the board (issue 24): PDF, DOCX, XLSX, CSV, TXT and MD read into the turn as
quoted data with page markers; caps; encrypted, corrupt, misnamed, zip-bomb and stalling files answered
clearly (the board keeps answering); a long document searched and cited by the advisors of its own
conversation only; ``sabha media list``.

The board is the real one (``Board.open`` on the scripted model); each message goes the way the intake
sends it: ``board.media.prepare`` (the bytes are already in the blob store, as after a download), then
``board.handle``. Extraction runs in its real child process.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

import docx
import openpyxl  # type: ignore[import-untyped]
import pytest
from pypdf import PdfReader, PdfWriter

from board.app import Board
from board.envelope import Envelope, Reply
from board.llm.base import LLMRequest
from board.media.attachment import Attachment, MediaKind
from board.media.settings import MediaSettings
from board.spending.allowance import PublicTerms
from tests.support.fakes.scripted_model import ScriptedModel, Step, call, say
from tests.support.knowledge import board_settings, tiny_pdf

SABHA = [sys.executable, "-m", "bot.cli.main"]


# -- making documents ----------------------------------------------------------------------------------


def docx_bytes(paragraphs: list[str], table: list[list[str]] | None = None) -> bytes:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def xlsx_bytes(sheets: dict[str, list[list[Any]]]) -> bytes:
    book = openpyxl.Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def encrypted_pdf(text: str) -> bytes:
    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(tiny_pdf([text]))))
    writer.encrypt("hunter2", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def stalling_pdf(operators: int = 1_000_000) -> bytes:
    """A 120 KB PDF whose one page is a million text operators (compressed): pypdf needs minutes for it."""
    stream = zlib.compress(b"BT /F1 12 Tf 1 0 0 1 72 720 Tm (a) Tj ET\n" * operators, 9)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
               b"/Contents 5 0 R >>",
               b"<< /Length " + str(len(stream)).encode() + b" /Filter /FlateDecode >>\nstream\n" + stream
               + b"\nendstream"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n".encode() + b"0000000000 65535 f \n"
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def zip_bomb_docx(unpacked_mb: int = 40) -> bytes:
    """A DOCX-shaped ZIP whose document part unpacks to ``unpacked_mb`` MB of zeros (a few KB packed)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w") as part:
            for _ in range(unpacked_mb):
                part.write(b"\0" * (1024 * 1024))
    return out.getvalue()


# -- the board --------------------------------------------------------------------------------------------


async def open_board(workspace: Path, data_dir: Path, model: ScriptedModel, **media: Any) -> Board:
    return await Board.open(board_settings(workspace, data_dir, model, media=MediaSettings(**media)),
                            model.registry())


def attach(b: Board, name: str, data: bytes, mime: str | None = None) -> Attachment:
    """A document as a channel announces it, its bytes already downloaded into the blob store."""
    blob = b.parts.media.blobs.put(data, name)
    return Attachment(kind=MediaKind.DOCUMENT, name=name, mime=mime, size=len(data), sha256=blob.sha256)


async def send(b: Board, text: str, *attachments: Attachment, chat: str = "c1", **kw: Any) -> tuple[Envelope, Reply]:
    """One message through the lane's steps: read the attachments, then answer."""
    envelope = Envelope(channel="console", text=text, sender=kw.pop("sender", "owner"), chat_id=chat,
                        is_owner=kw.pop("is_owner", True), attachments=attachments, **kw)
    prepared = await b.parts.media.prepare(envelope, None)
    return prepared, await b.handle(prepared)


def problems(envelope: Envelope) -> list[str | None]:
    return [a.problem for a in envelope.attachments]


# -- formats ---------------------------------------------------------------------------------------------


async def test_each_format_reaches_the_model_as_quoted_text_with_its_name_and_pages(workspace: Path,
                                                                                    data_dir: Path) -> None:
    model = ScriptedModel()
    async with await open_board(workspace, data_dir, model) as b:
        files = [
            attach(b, "deck.pdf", tiny_pdf(["Vision: tea for offices", "Ask: 2 million at 8 million pre"]),
                   "application/pdf"),
            attach(b, "memo.docx", docx_bytes(["Hiring plan for Q3"], [["Role", "Count"], ["Engineer", "4"]]),
                   "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
            attach(b, "model.xlsx", xlsx_bytes({"Revenue": [["Month", "MRR"], ["Jan", 1200], ["Feb", 1500]],
                                                "Costs": [["Rent", 900]]}), "application/octet-stream"),
            attach(b, "leads.csv", b"name,stage\nAcme,won\n\"Beta, Inc\",lost\n", "text/csv"),
            attach(b, "notes.txt", "Call the bank on Monday \u2014 caf\u00e9 meeting\n".encode(), "text/plain"),
            attach(b, "plan.md", b"# Plan\n\n- ship v2\n", None),
        ]
        envelope, reply = await send(b, "what is weak here?", *files)
    assert problems(envelope) == [None] * 6
    seen = model.requests[-1].last_user_text
    assert seen.startswith("what is weak here?")
    for name in ("deck.pdf", "memo.docx", "model.xlsx", "leads.csv", "notes.txt", "plan.md"):
        assert f'[document attached: "{name}"' in seen
    # page markers survive as data, each line quoted
    assert '"[p.1]"\n"Vision: tea for offices"\n"[p.2]"\n"Ask: 2 million at 8 million pre"' in seen
    assert '"Hiring plan for Q3"\n"Role,Count"\n"Engineer,4"' in seen
    assert '"[sheet Revenue]"\n"Month,MRR"\n"Jan,1200"\n"Feb,1500"\n"[sheet Costs]"\n"Rent,900"' in seen
    assert '"name,stage"\n"Acme,won"\n"\\"Beta, Inc\\",lost"' in seen
    assert '"Call the bank on Monday \u2014 caf\u00e9 meeting"' in seen and '"# Plan"' in seen
    assert reply.text.startswith("general: what is weak here?")  # answered, no notice


async def test_caps_on_pages_rows_and_characters_are_applied_and_said(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    async with await open_board(workspace, data_dir, model, doc_max_pages=2, doc_max_rows=3,
                                doc_max_chars=300) as b:
        envelope, _ = await send(
            b, "read these",
            attach(b, "long.pdf", tiny_pdf([f"page {n} text" for n in range(1, 6)]), "application/pdf"),
            attach(b, "rows.csv", "\n".join(f"row{n},{n}" for n in range(100)).encode(), "text/csv"),
            attach(b, "big.txt", ("word " * 400).encode(), "text/plain"))
    pdf, rows, text = (a.derived or "" for a in envelope.attachments)
    assert "page 2 text" in pdf and "page 3 text" not in pdf and "[p.3]" not in pdf
    assert "only the first 2 of 5 pages were read (media.doc_max_pages)" in pdf
    assert rows.splitlines()[:3] == ["row0,0", "row1,1", "row2,2"] and "row3,3" not in rows
    assert "only the first 3 rows were read (media.doc_max_rows)" in rows
    assert "only the first 300 characters were read (media.doc_max_chars)" in text
    assert len(text) < 300 + 100


# -- what cannot be read ----------------------------------------------------------------------------------


async def test_encrypted_corrupt_misnamed_and_bomb_documents_get_a_clear_reason(workspace: Path,
                                                                                data_dir: Path) -> None:
    model = ScriptedModel()
    async with await open_board(workspace, data_dir, model) as b:
        envelope, reply = await send(
            b, "thoughts?",
            attach(b, "secret.pdf", encrypted_pdf("the secret plan"), "application/pdf"),
            attach(b, "broken.pdf", b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 9 0 R\ngarbage", "application/pdf"),
            attach(b, "deck.pdf", b"<html><body>Not a PDF at all</body></html>", "application/pdf"),
            attach(b, "bomb.docx", zip_bomb_docx(),
                   "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
            attach(b, "photo.xlsx", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, None))
    secret, broken, fake, bomb, photo = problems(envelope)
    assert secret is not None and "secret.pdf is password-protected" in secret
    assert broken is not None and "broken.pdf could not be read as PDF: it looks damaged" in broken
    assert fake is not None and "deck.pdf is not a PDF: its content is a text file; I did not open it" in fake
    assert bomb is not None and "bomb.docx would unpack" in bomb and "zip bomb" in bomb
    assert photo is not None and "photo.xlsx is not an Excel workbook" in photo
    # each reason is told once, before the answer to the caption (the scripted model echoes its input after it)
    notice, answer = reply.text.split("\n\ngeneral: ", 1)
    for reason in (secret, broken, fake, bomb, photo):
        assert notice.count(reason) == 1
    assert answer.startswith("thoughts?")
    assert "the secret plan" not in model.requests[-1].last_user_text
    assert model.requests[-1].last_user_text.startswith("thoughts?")


async def test_a_document_that_stalls_the_reader_is_given_up_and_the_board_keeps_answering(
        workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    async with await open_board(workspace, data_dir, model, extract_timeout_s=3.0) as b:
        started = time.monotonic()
        envelope, reply = await send(b, "summarise", attach(b, "slow.pdf", stalling_pdf(), "application/pdf"))
        took = time.monotonic() - started
        assert problems(envelope)[0] == ("slow.pdf took longer than 3 s to read and was given up (it may be damaged "
                                         "or built to stall readers); send a smaller or simpler file, e.g. the PDF "
                                         "printed again")
        assert took < 3.0 + 60.0  # given up at the limit, not after pypdf's minutes (room for a loaded machine)
        assert "took longer than 3 s" in reply.text
        assert _readers_running() == []  # the child was killed, not left running
        _, marker = await send(b, "marker: still there?")
        assert marker.text == "general: marker: still there?"


def _readers_running() -> list[int]:
    """Extraction children of this process still alive."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"board.media.isolate" in cmdline:
            found.append(int(entry.name))
    return found


async def test_the_same_document_again_is_not_read_twice(workspace: Path, data_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import board.media.documents as documents

    model = ScriptedModel()
    async with await open_board(workspace, data_dir, model) as b:
        data = tiny_pdf(["Churn fell to 3 percent"])
        first, _ = await send(b, "one", attach(b, "kpi.pdf", data, "application/pdf"))

        async def no_child(*_: Any, **__: Any) -> Any:
            raise AssertionError("extracted again")

        monkeypatch.setattr(documents, "extract_isolated", no_child)
        again, _ = await send(b, "two", attach(b, "kpi-copy.pdf", data, "application/pdf"))
    assert first.attachments[0].derived == again.attachments[0].derived == "[p.1]\nChurn fell to 3 percent"


# -- a long document: searched, cited, and private to its conversation ----------------------------------

PAGES = [f"Section {n}. " + " ".join(f"Filler sentence {n}.{i} about the tea market." for i in range(40))
         for n in range(1, 13)]
PAGES[6] = "Retention. Quokka cohort retention reached 37 percent after six months. " + PAGES[6]


def _tool_results(requests: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(m.content) for r in requests for m in r.request.messages
            if m.role == "tool" and m.name == "search_knowledge_base"]


def _cite_from_search(request: LLMRequest) -> Step:
    """Answer with what the last search found, cited the way the tool says."""
    result = json.loads(next(m.content for m in reversed(request.messages) if m.role == "tool"))
    hits = result["result"]["results"]
    return say(f"Retention was 37 percent {hits[0]['cite']}." if hits else "I found nothing about retention.")


@pytest.mark.parametrize("stranger", [False, True], ids=["owner", "stranger"])
async def test_a_long_document_is_searched_and_cited_in_its_conversation_only(
        workspace: Path, data_dir: Path, stranger: bool) -> None:
    model = ScriptedModel()
    ask = call("search_knowledge_base", {"query": "quokka cohort retention"})
    model.script(say("Noted the deck."), ask, _cite_from_search, ask, _cite_from_search)
    who: dict[str, Any] = {"is_owner": False, "is_public": True, "sender": "15550001111"} if stranger else {}
    async with await open_board(workspace, data_dir, model, doc_inline_chars=2000) as b:
        b.parts.money.set_public_terms(PublicTerms("console", daily_usd=5.0))
        deck = attach(b, "deck.pdf", tiny_pdf(PAGES), "application/pdf")
        envelope, _ = await send(b, "here is our deck", deck, chat="c1", **who)
        _, cited = await send(b, "what retention does the deck report?", chat="c1", **who)
        other = {**who, "sender": "15550002222"} if stranger else who
        _, elsewhere = await send(b, "what retention does the deck report?", chat="c2", **other)
    head = envelope.attachments[0].derived or ""
    assert head.startswith("[p.1]\nSection 1.") and "Quokka" not in head and len(head) <= 2000
    assert head.endswith("[only the start of deck.pdf is shown; all of it (" + head.split("all of it (")[1])
    assert "searchable in this conversation with search_knowledge_base; cite what you use as [deck.pdf p.N]" in head
    assert "only the start of deck.pdf is shown" in model.requests[0].last_user_text  # the turn was told
    assert cited.text == "Retention was 37 percent [deck.pdf p.7]."
    first, second = _tool_results(model.requests)
    assert first["result"]["results"][0]["source"] == "attached in this conversation: deck.pdf"
    assert "Quokka cohort retention reached 37 percent" in first["result"]["results"][0]["passage"]
    assert second["result"]["results"] == [] and elsewhere.text == "I found nothing about retention."


async def test_without_the_knowledge_base_a_long_document_is_cut_and_says_so(workspace: Path,
                                                                             data_dir: Path) -> None:
    from board.memory.knowledge.base import KnowledgeSettings

    model = ScriptedModel()
    settings = board_settings(workspace, data_dir, model, media=MediaSettings(doc_inline_chars=1000),
                              knowledge=KnowledgeSettings(enabled=False))
    async with await Board.open(settings, model.registry()) as b:
        envelope, _ = await send(b, "deck", attach(b, "deck.pdf", tiny_pdf(PAGES), "application/pdf"))
    derived = envelope.attachments[0].derived or ""
    assert len(derived) <= 1000 and derived.endswith("the rest cannot be searched: the knowledge base is off "
                                                     "(knowledge.enabled)]")


# -- sabha media list -----------------------------------------------------------------------------------


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3])  # this checkout's code
    return subprocess.run(SABHA + args, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


async def test_sabha_media_list_shows_what_each_conversation_attached(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert run(["init", str(tmp_path / "proj")], cwd=tmp_path).returncode == 0
    home = tmp_path / "proj"
    empty = run(["media", "list"], cwd=home)
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout.startswith("nothing attached yet")
    model = ScriptedModel()
    async with await open_board(home / "workspace", home / "sessions", model, doc_inline_chars=2000) as b:
        await send(b, "deck", attach(b, "deck.pdf", tiny_pdf(PAGES), "application/pdf"), chat="c1")
        await send(b, "memo", attach(b, "memo.txt", b"Short memo\n", "text/plain"), chat="c2")
        await send(b, "bad", attach(b, "fake.pdf", b"hello", "application/pdf"), chat="c2")
    listing = run(["media", "list"], cwd=home)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].split() == ["WHEN", "CHANNEL", "CHAT", "FROM", "KIND", "NAME", "SIZE", "STATUS"]
    assert "fake.pdf" in lines[1] and "not read: fake.pdf is not a PDF" in lines[1]
    assert "memo.txt" in lines[2] and lines[2].rstrip().endswith("read")
    assert "deck.pdf" in lines[3] and lines[3].rstrip().endswith("searchable") and " c1 " in lines[3]
    assert lines[4].startswith("3 attachment(s), newest first")
    one = run(["media", "list", "--chat", "c1", "--channel", "console", "--json"], cwd=home)
    rows = json.loads(one.stdout)
    assert [(r["name"], r["chat"], r["status"]) for r in rows] == [("deck.pdf", "c1", "searchable")]
    none = run(["media", "list", "--channel", "whatsapp"], cwd=home)
    assert none.stdout.strip() == "nothing attached on whatsapp yet"
    assert "chat:" not in run(["kb", "list"], cwd=home).stdout  # conversation documents are not the workspace's
    rebuilt = run(["kb", "reindex"], cwd=home)  # the index is derived data: the attached long document comes back
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "indexed again 1 long document(s) attached in conversations" in rebuilt.stdout
    again = json.loads(run(["media", "list", "--chat", "c1", "--json"], cwd=home).stdout)
    assert [r["status"] for r in again] == ["searchable"]


def test_a_damaged_zip_is_refused_before_any_part_is_read(tmp_path: Path) -> None:
    from board.media.problems import MediaProblem, Problem
    from board.media.zipguard import check_zip

    big = tmp_path / "big.docx"
    big.write_bytes(zip_bomb_docx(12))
    with pytest.raises(MediaProblem) as caught:
        check_zip(big, "big.docx", max_bytes=5 * 1024 * 1024)
    assert caught.value.problem is Problem.UNREADABLE and "over the limit of 5 MB" in caught.value.text
    cut = tmp_path / "cut.docx"
    cut.write_bytes(docx_bytes(["hello"])[:200])
    with pytest.raises(MediaProblem, match=r"cut\.docx is damaged: it is not a readable ZIP container"):
        check_zip(cut, "cut.docx")


async def test_files_in_chat_lists_this_chats_attachments_for_the_owner_only(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    async with await open_board(workspace, data_dir, model, doc_inline_chars=2000) as b:
        b.parts.money.set_public_terms(PublicTerms("console", daily_usd=5.0))
        await send(b, "deck", attach(b, "deck.pdf", tiny_pdf(PAGES), "application/pdf"), chat="c1")
        await send(b, "memo", attach(b, "memo.txt", b"Short memo\n", "text/plain"), chat="c1")
        await send(b, "elsewhere", attach(b, "other.txt", b"Other chat\n", "text/plain"), chat="c2")
        _, listing = await send(b, "/files", chat="c1")
        _, stranger = await send(b, "/files", chat="c1", is_owner=False, is_public=True, sender="15550001111")
    lines = listing.text.splitlines()
    assert lines[0].startswith("Attached in this chat (newest first")
    assert lines[1].endswith("memo.txt (document, 11 bytes) from owner: read")
    assert "deck.pdf (document, 24 KB) from owner: searchable by the advisors here" in lines[2]
    assert "other.txt" not in listing.text and len(lines) == 4
    assert "deck.pdf" not in stranger.text and "only" in stranger.text.lower(), stranger.text


async def test_a_long_document_leaves_the_search_after_media_keep_days(workspace: Path, data_dir: Path) -> None:
    from board.memory.knowledge.index import conversation_scope

    model = ScriptedModel()
    async with await open_board(workspace, data_dir, model, doc_inline_chars=2000) as b:
        await send(b, "deck", attach(b, "deck.pdf", tiny_pdf(PAGES), "application/pdf"), chat="c1")
        assert b.parts.knowledge is not None
        scope = conversation_scope("console", "c1")
        found = await b.parts.knowledge.search("quokka retention", role="general", conversation=scope)
        assert found and found[0].heading == "deck.pdf p.7"
        assert await b.parts.knowledge.drop_conversation_documents(keep_days=30) == 0  # sent today: kept
        assert await b.parts.knowledge.drop_conversation_documents(keep_days=-1) == 1  # "older" than the future
        assert await b.parts.knowledge.search("quokka retention", role="general", conversation=scope) == []


async def test_the_reader_child_gets_no_secrets_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from board.media.isolate import _child_env

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:secret")
    env = _child_env()
    assert "sk-test-secret" not in env.values() and "123:secret" not in env.values()
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(Path(__file__).resolve().parents[3])

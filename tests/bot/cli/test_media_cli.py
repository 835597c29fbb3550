"""Files from the terminal (issue 24): ``sabha ask --file`` and ``/attach`` in ``sabha chat``.

Real ``sabha`` processes: a file named on the command line (or attached in the chat) reaches
the model as quoted data with its name, through the same media path as the channels'; a path
that cannot be sent is refused before anything is asked (the fake model counts its calls).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.support.fakes.echo_model import EchoModel

REPO = Path(__file__).resolve().parents[3]
SABHA = [sys.executable, "-m", "bot.cli.main"]
NOTE = "Churn rose to 7 percent in October while signups fell."
NUMBERS = "month,revenue\nSeptember,41000\nOctober,38500\n"


def env_for(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    env.update(XDG_DATA_HOME=str(tmp_path / "xdg"), PYTHONPATH=str(REPO))  # this checkout's code
    return env


def run(args: list[str], cwd: Path, tmp_path: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(SABHA + args, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120,
                          env=env_for(tmp_path))


async def arun(args: list[str], cwd: Path, tmp_path: Path,
               stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """:func:`run` off the event loop (the fake model serves on it meanwhile)."""
    return await asyncio.to_thread(run, args, cwd, tmp_path, stdin)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    result = run(["init", str(tmp_path / "proj")], tmp_path, tmp_path)
    assert result.returncode == 0, result.stderr
    (tmp_path / "proj" / "notes.txt").write_text(NOTE + "\n", encoding="utf-8")
    (tmp_path / "proj" / "numbers.csv").write_text(NUMBERS, encoding="utf-8")
    return tmp_path / "proj"


def echo_config(home: Path, model: EchoModel, extra: str = "") -> None:
    (home / "sabha.yaml").write_text(
        "workspace: ./workspace\ndata_dir: ./sessions\n"
        "llm:\n  model: openai:echo\n  retry: {retries: 0}\n"
        f"  providers:\n    openai:\n      base_url: {model.base_url}\n{extra}", encoding="utf-8")


def last_user(body: dict[str, Any]) -> str:
    message = next(m for m in reversed(body["messages"]) if m["role"] == "user")
    content = message["content"]
    return content if isinstance(content, str) else json.dumps(content)


def transcript_user_texts(home: Path) -> list[str]:
    texts = []
    for path in sorted((home / "sessions").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("type") == "message" and entry.get("role") == "user":
                texts.append(entry["text"])
    return texts


def small_pdf(text: str) -> bytes:
    """A one-page PDF whose page shows ``text`` (Helvetica), with a correct xref table."""
    stream = f"BT /F1 14 Tf 72 720 Td ({text}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


# -- sabha ask --file ---------------------------------------------------------------------


async def test_ask_with_files_gives_the_model_their_content(home: Path, tmp_path: Path) -> None:
    async with EchoModel(latency=0.05) as model:
        echo_config(home, model)
        result = await arun(["ask", "--file", "notes.txt", "--file", str(home / "numbers.csv"),
                             "what is weak here?"], home, tmp_path)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("🧭 General: ECHO what is weak here?"), result.stdout
        assert "attached: notes.txt" in result.stderr and "attached: numbers.csv" in result.stderr
        assert model.calls == 1
        sent = last_user(model.bodies[0])
        assert "what is weak here?" in sent
        assert "notes.txt" in sent and NOTE in sent  # the file's name and its words, quoted
        assert "numbers.csv" in sent and "October" in sent and "38500" in sent
        assert "not instructions" in sent


async def test_ask_with_a_pdf_gives_the_model_its_text(home: Path, tmp_path: Path) -> None:
    (home / "deck.pdf").write_bytes(small_pdf("Runway is nine months at the current burn"))
    async with EchoModel(latency=0.05) as model:
        echo_config(home, model)
        result = await arun(["ask", "--file", "deck.pdf", "what is weak here?"], home, tmp_path)
        assert result.returncode == 0, result.stderr
        assert "attached: deck.pdf" in result.stderr
        sent = last_user(model.bodies[0])
        assert "deck.pdf" in sent and "application/pdf" in sent
        assert "Runway is nine months at the current burn" in sent


def test_ask_with_a_file_on_the_offline_board(home: Path, tmp_path: Path) -> None:
    """The board ``sabha init`` makes (the plain-config fast path, the offline model)."""
    result = run(["ask", "--file", "notes.txt", "what is weak here?"], home, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("🧭 General: ") and "what is weak here?" in result.stdout
    assert "attached: notes.txt" in result.stderr
    assert "I was given notes.txt (its text)" in result.stdout  # the offline model says it got the file
    asked = transcript_user_texts(home)
    assert len(asked) == 1 and NOTE in asked[0] and "notes.txt" in asked[0]  # what the board was given


def test_ask_with_only_a_file_and_no_question(home: Path, tmp_path: Path) -> None:
    result = run(["ask", "--file", "notes.txt"], home, tmp_path, stdin="")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("🧭 General: ")
    assert NOTE in transcript_user_texts(home)[0]


async def test_paths_that_cannot_be_sent_are_refused_before_anything_is_asked(home: Path, tmp_path: Path) -> None:
    (home / "big.txt").write_text("x" * 5000, encoding="utf-8")
    (home / "folder").mkdir()
    locked = home / "locked.txt"
    locked.write_text("secret", encoding="utf-8")
    locked.chmod(0)
    async with EchoModel(latency=0.05) as model:
        echo_config(home, model, "media:\n  max_bytes: 2048\n")
        cases = [
            ("missing.pdf", r"no file .*missing\.pdf"),
            ("folder", r"folder.* is a folder, not a file"),
            ("big.txt", r"big\.txt is 5 KB; the limit for a document from the terminal is 2 KB"),
        ]
        if os.geteuid() != 0:  # root reads anything
            cases.append(("locked.txt", r"locked\.txt cannot be read"))
        for path, said in cases:
            result = await arun(["ask", "--file", "notes.txt", "--file", path, "what is weak here?"], home, tmp_path)
            assert result.returncode == 2, (path, result.stdout, result.stderr)
            assert re.search(said, result.stderr), (path, result.stderr)
            assert "Traceback" not in result.stderr and result.stdout == ""
        assert model.calls == 0  # nothing was asked, nothing spent
    assert transcript_user_texts(home) == []


def test_ask_help_names_file(tmp_path: Path) -> None:
    result = run(["ask", "--help"], tmp_path, tmp_path)
    assert result.returncode == 0
    assert "--file PATH" in result.stdout and "repeat" in result.stdout
    chat = run(["chat", "--help"], tmp_path, tmp_path)
    assert "/attach PATH" in chat.stdout


# -- /attach in sabha chat ----------------------------------------------------------------


def test_piped_chat_attach_goes_with_the_next_message(home: Path, tmp_path: Path) -> None:
    lines = ["/attach notes.txt", "what is weak here?", "/attach numbers.csv and these numbers?",
             "/attach nowhere.txt", "a plain question"]
    result = run(["chat"], home, tmp_path, stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    answers = result.stdout.strip().splitlines()
    assert len(answers) == 3 and all(a.startswith("🧭 General: ") for a in answers), result.stdout
    assert "what is weak here?" in answers[0] and "and these numbers?" in answers[1]
    assert "attached notes.txt (document, text/plain" in result.stderr
    assert "goes with your next message" in result.stderr
    assert re.search(r"no file .*nowhere\.txt", result.stderr)
    asked = transcript_user_texts(home)
    assert len(asked) == 3
    assert NOTE in asked[0] and "38500" not in asked[0]
    assert "38500" in asked[1] and NOTE not in asked[1]
    assert asked[2] == "a plain question"  # the refused file was not kept for later


def screen(child: pexpect.spawn) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][0-9A-Za-z]|\r", "", child.logfile_read.getvalue())


def test_terminal_chat_attach(home: Path, tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONPATH": str(REPO),
           "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = pexpect.spawn(sys.executable, ["-m", "bot.cli.main", "chat"], cwd=str(home), env=env,
                          encoding="utf-8", timeout=60, dimensions=(40, 200))
    child.logfile_read = io.StringIO()
    child.expect("you>")
    child.send("/attach ./missing.txt\r")
    child.expect("no file")
    child.expect("you>")
    child.send("/attach notes.txt\r")
    child.expect("goes with your next message")
    child.expect("you>")
    child.send("what is weak here?\r")
    child.expect("General:")
    child.expect("you>")
    child.send("/quit\r")
    child.expect("Goodbye.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, screen(child)
    assert "attached notes.txt (document" in screen(child)
    asked = transcript_user_texts(home)
    assert len(asked) == 1 and NOTE in asked[0] and "what is weak here?" in asked[0]


# -- the pieces -----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "head", "kind", "mime"), [
    ("deck.pdf", b"%PDF-1.7\n", "document", "application/pdf"),
    ("scan", b"%PDF-1.4\n", "document", "application/pdf"),  # no extension: the bytes say it
    ("chart.png", b"\x89PNG\r\n\x1a\n\x00\x00", "image", "image/png"),
    ("photo.txt", b"\xff\xd8\xff\xe0\x00\x10JFIF", "image", "image/jpeg"),  # the bytes win over the name
    ("note.ogg", b"OggS\x00\x02", "voice", "audio/ogg"),
    ("talk.mp3", b"ID3\x04\x00", "audio", "audio/mpeg"),
    ("plan.docx", b"PK\x03\x04\x14\x00",
     "document", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("notes", b"plain words\n", "document", "text/plain"),
    ("blob.bin", b"\x00\x01\x02\x03", "document", "application/octet-stream"),
])
def test_kind_and_mime_from_the_bytes_then_the_name(name: str, head: bytes, kind: str, mime: str) -> None:
    from bot.cli.attach import kind_and_mime

    found = kind_and_mime(Path(name), head)
    assert (found[0].value, found[1]) == (kind, mime)


def test_attach_line_splits_path_and_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.cli.attach import Attaching

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my deck.txt").write_text(NOTE, encoding="utf-8")
    (tmp_path / "a.txt").write_text(NOTE, encoding="utf-8")
    attaching = Attaching(lambda channel, kind: 10**6)
    assert attaching.line("hello") == (None, "hello")
    told, message = attaching.line("/attach my deck.txt")  # a whole line that is a file: no quotes needed
    assert message is None and told is not None and "my deck.txt" in told
    told, message = attaching.line('/attach "my deck.txt" what is weak?')
    assert message == "what is weak?"
    told, message = attaching.line("/attach a.txt  and this?")
    assert message == "and this?"
    assert [a.name for a in attaching.take()] == ["my deck.txt", "my deck.txt", "a.txt"] and attaching.take() == ()
    told, message = attaching.line("/attach")
    assert message is None and told is not None and told.startswith("usage: /attach PATH")


async def test_local_files_stream_into_the_blob_store_and_a_changed_file_is_told(tmp_path: Path) -> None:
    from board.media.blobs import BlobStore
    from board.media.problems import MediaProblem
    from bot.cli.attach import CHUNK, LocalFiles, local_attachment

    big = tmp_path / "big.csv"
    big.write_bytes(b"a,b\n" * (CHUNK // 2))  # two chunks
    attachment = local_attachment(str(big), lambda channel, kind: 10**7)
    assert attachment.source is not None and attachment.source.channel == "console"
    assert attachment.source.id == str(big) and attachment.size == 2 * CHUNK
    store = BlobStore(tmp_path / "media")
    with store.sink(10**7, attachment.label) as sink:
        await LocalFiles().fetch_media(attachment, sink)
        blob = sink.finish()
    assert blob.path.read_bytes() == big.read_bytes()
    big.unlink()
    with pytest.raises(MediaProblem, match="cannot be read any more"), store.sink(10**7, attachment.label) as sink:
        await LocalFiles().fetch_media(attachment, sink)

"""Meetings with evidence (issue 24): ``/meeting <topic>`` right after a document or a voice note
in the same conversation (or sent with one) puts it on the agenda as evidence.

The chair's framing and every member's round-1 question carry each piece of evidence as quoted
data (its name, its kind, what was read from it), the members are asked to cite it, and the
minutes list it. Evidence from another conversation, or from long ago, is never used.
Through the board with the scripted model (its prompts are recorded), and once through a real
``sabha chat`` process on the offline model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from board.app import Board
from board.envelope import Envelope
from board.llm.base import LLMRequest
from board.media.attachment import Attachment, MediaKind, MediaRef
from board.media.blobs import BlobSink
from board.room.meeting import MeetingEvent, MeetingSettings
from tests.support.board import board_with, framing, last_user, schema_of, valid_decision
from tests.support.fakes.scripted_model import ScriptedModel, Step, say

pytestmark = [pytest.mark.backends, pytest.mark.usefixtures("boards_on_backend")]

REPO = Path(__file__).resolve().parents[3]
SPECIALISTS = ["research", "content", "finance", "strategy", "critic"]
STANCE = json.dumps({"position": "conditional", "confidence": 0.6, "assumption": "the numbers hold up"})
DECK = "Q3 board deck\nChurn rose to 7 percent in October.\nRunway: nine months at the current burn.\n"
GROUP = {"channel": "telegram", "sender": "1", "chat_id": "-100", "is_group": True, "is_owner": True}


def brain(request: LLMRequest) -> Step:
    schema = schema_of(request)
    if schema is not None:
        if "questions" in schema.get("properties", {}):
            return say(framing(SPECIALISTS))
        if "position" in schema.get("properties", {}):
            return say(STANCE)
        return say(valid_decision(["general", *SPECIALISTS]))
    if "draft decision" in last_user(request):
        return say("NO OBJECTION")
    return say(f"{request.persona.role}: as the deck says, churn is the problem.\nSTANCE: {STANCE}")


class Files:
    """A channel's fetcher serving fixed bytes by media id."""

    def __init__(self, **files: bytes) -> None:
        self.files = files

    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None:
        assert attachment.source is not None
        sink.write(self.files[attachment.source.id])


def document(name: str = "deck.txt", media_id: str = "doc-1") -> Attachment:
    return Attachment(kind=MediaKind.DOCUMENT, mime="text/plain", name=name, size=len(DECK.encode()),
                      source=MediaRef(channel="telegram", id=media_id))


@pytest.fixture
async def board(workspace: Path, data_dir: Path) -> AsyncIterator[tuple[Board, ScriptedModel, list[MeetingEvent]]]:
    model = ScriptedModel(default=brain)
    opened = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1))
    seen: list[MeetingEvent] = []

    async def collect(event: MeetingEvent) -> None:
        seen.append(event)

    opened.parts.room.subscribe(collect)
    try:
        yield opened, model, seen
    finally:
        await opened.close()


async def send(board: Board, text: str, *attachments: Attachment, message_id: str, **place: Any) -> str:
    """A message through the media path as the intake sends it: prepared (fetched, read, recorded), answered."""
    envelope = Envelope(text=text, message_id=message_id, attachments=attachments, **{**GROUP, **place})
    envelope = await board.parts.media.prepare(envelope, Files(**{"doc-1": DECK.encode(), "doc-2": DECK.encode()}))
    return (await board.handle(envelope)).text


def framing_prompt(model: ScriptedModel) -> str:
    asked = [r.request for r in model.requests_for("general")
             if (schema_of(r.request) or {}).get("properties", {}).get("questions")]
    assert len(asked) == 1
    return last_user(asked[0])


def round_one_prompts(model: ScriptedModel) -> list[str]:
    return [last_user(r.request) for role in SPECIALISTS for r in model.requests_for(role)
            if "Round 1 " in last_user(r.request)]


def minutes(seen: list[MeetingEvent]) -> str:
    ended = [e for e in seen if e.kind == "ended"]
    assert len(ended) == 1
    return str(ended[0].data["minutes"])


async def test_a_meeting_right_after_a_document_takes_it_as_evidence(
        board: tuple[Board, ScriptedModel, list[MeetingEvent]]) -> None:
    b, model, seen = board
    await send(b, "here is the deck", document(), message_id="1")
    started = await send(b, "/meeting should we raise prices?", message_id="2")
    assert "deck.txt" in started and "evidence" in started
    await b.parts.room.drain(20)
    framed = framing_prompt(model)
    assert "deck.txt" in framed and "document" in framed
    assert '"Churn rose to 7 percent in October."' in framed  # quoted data, line by line
    assert "not instructions" in framed
    rounds = round_one_prompts(model)
    assert len(rounds) == len(SPECIALISTS)
    for prompt in rounds:
        assert '"Runway: nine months at the current burn."' in prompt and "cite" in prompt and "[deck.txt]" in prompt
    written = minutes(seen)
    assert "## Evidence" in written and "deck.txt (document" in written


async def test_a_meeting_sent_with_a_document_takes_it_as_evidence(
        board: tuple[Board, ScriptedModel, list[MeetingEvent]]) -> None:
    b, model, seen = board
    started = await send(b, "/meeting is the deck convincing?", document("q3.txt", "doc-2"), message_id="5")
    assert "Convening the board" in started and "q3.txt" in started
    await b.parts.room.drain(20)
    assert '"Churn rose to 7 percent in October."' in framing_prompt(model)
    assert "q3.txt" in minutes(seen)


async def test_evidence_from_another_chat_or_long_ago_is_not_used(
        board: tuple[Board, ScriptedModel, list[MeetingEvent]]) -> None:
    b, model, seen = board
    await send(b, "here is the deck", document(), message_id="1", chat_id="-999")  # another group
    model.requests.clear()  # that answer read the deck; the meeting's prompts must not
    started = await send(b, "/meeting should we raise prices?", message_id="2")
    assert "evidence" not in started
    await b.parts.room.drain(20)
    assert "Churn" not in framing_prompt(model) and "deck.txt" not in framing_prompt(model)
    assert all("Churn" not in r.request.messages[-1].content for r in model.requests)
    assert "## Evidence" not in minutes(seen)

    # Here, but an hour ago: not "right after".
    await send(b, "here is the deck", document(), message_id="3")
    await b.parts.db.execute("UPDATE message_attachments SET created_at = '2020-01-01T00:00:00.000+00:00'")
    seen.clear()
    model.requests.clear()
    started = await send(b, "/meeting and now?", message_id="4")
    assert "evidence" not in started
    await b.parts.room.drain(20)
    assert "Churn" not in framing_prompt(model)
    assert "## Evidence" not in minutes(seen)


def test_sabha_chat_meeting_after_an_attached_file_lists_it_in_the_minutes(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    env.update(XDG_DATA_HOME=str(tmp_path / "xdg"), PYTHONPATH=str(REPO))
    sabha = [sys.executable, "-m", "bot.cli.main"]
    home = tmp_path / "proj"
    assert subprocess.run([*sabha, "init", str(home)], env=env, capture_output=True, timeout=120).returncode == 0
    (home / "deck.txt").write_text(DECK, encoding="utf-8")
    lines = "/attach deck.txt what do you make of this deck?\n/meeting should we raise prices?\n"
    result = subprocess.run([*sabha, "chat"], cwd=home, input=lines, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Convening the board" in result.stdout and "with the evidence: deck.txt" in result.stdout
    written = result.stdout.split("# Board meeting: should we raise prices?", 1)[1]
    assert "## Evidence" in written and "deck.txt (document, text/plain" in written


class Transcriber:
    """Hears every voice note say the same thing."""

    kinds = frozenset({MediaKind.VOICE})

    async def understand(self, attachment: Attachment, blob: Any, ctx: Any) -> Attachment:
        return attachment.with_(derived="We should raise prices by ten percent before the summer.")


async def test_a_voice_note_is_evidence_and_a_picture_nothing_was_read_from_is_not(
        board: tuple[Board, ScriptedModel, list[MeetingEvent]]) -> None:
    b, model, seen = board
    b.parts.media.register(Transcriber())
    voice = Attachment(kind=MediaKind.VOICE, mime="audio/ogg", duration_s=7, size=len(DECK.encode()),
                       source=MediaRef(channel="telegram", id="doc-1"))
    picture = Attachment(kind=MediaKind.IMAGE, mime="image/png", problem="the picture could not be read",
                         source=MediaRef(channel="telegram", id="doc-2"))
    await send(b, "", voice, message_id="1")
    await send(b, "and this chart", picture, message_id="2")
    started = await send(b, "/meeting raise prices?", message_id="3")
    assert "with the evidence: a voice note." in started and "picture" not in started
    await b.parts.room.drain(20)
    framed = framing_prompt(model)
    assert "transcribed from speech" in framed
    assert '"We should raise prices by ten percent before the summer."' in framed
    assert "image/png" not in framed
    assert "- a voice note (voice, audio/ogg" in minutes(seen)


def test_sabha_meeting_with_a_file_takes_it_as_evidence(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    env.update(XDG_DATA_HOME=str(tmp_path / "xdg"), PYTHONPATH=str(REPO))
    sabha = [sys.executable, "-m", "bot.cli.main"]
    home = tmp_path / "proj"
    assert subprocess.run([*sabha, "init", str(home)], env=env, capture_output=True, timeout=120).returncode == 0
    (home / "deck.txt").write_text(DECK, encoding="utf-8")
    result = subprocess.run([*sabha, "meeting", "--quiet", "--file", "deck.txt", "should we raise prices?"],
                            cwd=home, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "attached: deck.txt" in result.stderr
    assert "## Evidence\n- deck.txt (document, text/plain" in result.stdout
    missing = subprocess.run([*sabha, "meeting", "--file", "nowhere.pdf", "should we raise prices?"],
                             cwd=home, env=env, capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and "no file" in missing.stderr and "Board meeting" not in missing.stdout

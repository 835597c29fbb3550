"""Voice notes heard and answers spoken (issue 24, voice): through the real intake, the real board
and the official OpenAI SDK against the fake OpenAI server (transcription, speech, chat).

A small courier stands in for a channel (it serves the note's bytes the way a channel's
``fetch_media`` does and records what it delivers); everything between is the daemon's own code.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from board.allowance import PUBLIC_CAP_REACHED, PublicTerms
from board.envelope import Envelope, Reply
from board.media.attachment import Attachment, MediaKind, MediaRef
from board.media.blobs import BlobSink
from board.service import Board
from bot.app import all_migrations, build_providers
from bot.channels.base import Admission, ChannelTexts, SendProgress
from bot.config import LoadedConfig, parse_config
from bot.intake.inbox import Arrival, reply_from_json, reply_to_json
from bot.intake.intake import Intake, IntakeHub
from tests.fakes.openai_api import FakeOpenAI, fake_ogg_opus

CHANNEL = "voicetest"
QUESTION = "Should we raise our prices by ten percent before the festival season?"


@dataclass
class NoteCourier:
    """A channel in miniature: everyone admitted, one lane per chat, files served from memory."""

    name: str = CHANNEL
    texts: ChannelTexts = field(default_factory=ChannelTexts)
    files: dict[str, bytes] = field(default_factory=dict)
    delivered: list[Reply] = field(default_factory=list)
    fetched: int = 0
    _event: asyncio.Event = field(default_factory=asyncio.Event)

    def admit(self, envelope: Envelope) -> Admission:
        return Admission(True)

    def conversation(self, envelope: Envelope) -> str:
        return envelope.chat_id

    @asynccontextmanager
    async def typing(self, envelope: Envelope) -> AsyncIterator[None]:
        yield

    async def deliver(self, reply: Reply, progress: SendProgress) -> None:
        await progress.leaving()
        progress.posted += 1
        self.delivered.append(reply)
        self._event.set()

    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None:
        assert attachment.source is not None
        self.fetched += 1
        data = self.files[attachment.source.id]
        sink.expect(size=len(data), mime=attachment.mime)
        for start in range(0, len(data), 1024):
            sink.write(data[start:start + 1024])

    async def reply_to(self, message_id: str, timeout: float = 20.0) -> Reply:
        """The reply to ``message_id``, once delivered."""

        async def wait() -> Reply:
            while True:
                for reply in self.delivered:
                    if reply.reply_to == message_id:
                        return reply
                self._event.clear()
                await self._event.wait()

        return await asyncio.wait_for(wait(), timeout)


@dataclass
class Rig:
    board: Board
    intake: Intake
    courier: NoteCourier
    fake: FakeOpenAI
    hub: IntakeHub
    sent: int = 0

    async def send(self, text: str = "", *, note: bytes | None = None, duration: float | None = None,
                   sender: str = "owner", public: bool = False, kind: MediaKind = MediaKind.VOICE,
                   message_id: str | None = None) -> str:
        """``sender`` sends ``text`` (with a voice note of ``note``'s bytes); returns the message id."""
        self.sent += 1
        mid = message_id or f"m{self.sent}"
        attachments: tuple[Attachment, ...] = ()
        if note is not None:
            file_id = f"file-{mid}"
            self.courier.files[file_id] = note
            attachments = (Attachment(kind=kind, mime="audio/ogg; codecs=opus", size=len(note), duration_s=duration,
                                      source=MediaRef(channel=CHANNEL, id=file_id)),)
        envelope = Envelope(channel=CHANNEL, text=text, sender=sender, chat_id=f"chat-{sender}", message_id=mid,
                            is_owner=sender == "owner", is_public=public, attachments=attachments)
        await self.intake.receive([Arrival(envelope, envelope.chat_id)])
        return mid

    async def ask(self, text: str = "", **kw: Any) -> Reply:
        """:meth:`send`, then the reply delivered."""
        return await self.courier.reply_to(await self.send(text, **kw))

    def chat_prompts(self) -> list[str]:
        """The last user message of every chat request the fake received."""
        out = []
        for request in self.fake.requests:
            messages = (request.body or {}).get("messages") or []
            users = [m for m in messages if m.get("role") == "user"]
            content = users[-1]["content"] if users else ""
            out.append(content if isinstance(content, str) else json.dumps(content))
        return out

    async def ledger_rows(self, purpose: str) -> list[dict[str, Any]]:
        rows = await self.board.db.fetchall(
            "SELECT model, outcome, cost_usd, sender, scope, tags, attempt FROM llm_calls WHERE purpose = ? "
            "ORDER BY id", (purpose,))
        return [dict(zip(("model", "outcome", "cost_usd", "sender", "scope", "tags", "attempt"), tuple(r),
                         strict=True)) for r in rows]


def media_yaml(**media: Any) -> str:
    lines = [f"  {k}: {json.dumps(v)}" for k, v in media.items()]
    return "media:\n" + "\n".join(lines) + "\n" if lines else ""


@asynccontextmanager
async def rig(tmp_path: Path, workspace: Path, fake: FakeOpenAI, **media: Any) -> AsyncIterator[Rig]:
    """The board (chat on the fake's gpt-4o-mini, ``media`` settings) behind a real intake."""
    yaml_text = f"""
llm:
  model: openai:gpt-4o-mini
  retry: {{retries: 1, backoff_s: 0.01, backoff_max_s: 0.05, retry_after_max_s: 1}}
  timeout_s: 10
  providers:
    openai: {{base_url: "{fake.base_url}", api_key: "sk-test"}}
{media_yaml(**media)}"""
    config = parse_config(yaml_text, source="test.yaml", env={})
    loaded = LoadedConfig(config=config, source=None, base_dir=tmp_path)
    settings = replace(loaded.board_settings(), workspace=workspace, data_dir=tmp_path / "sessions")
    board = await Board.open(settings, build_providers(loaded, env={}), migrations=all_migrations())
    hub = IntakeHub()
    courier = NoteCourier()
    try:
        yield Rig(board, hub.intake(board, courier), courier, fake, hub)
    finally:
        await hub.drain(5)
        await board.close()


NOTE = fake_ogg_opus(7.0, b"question one")  # 7 s by its last granule; no duration from the "channel"


# -- transcription -------------------------------------------------------------------------


async def test_voice_note_is_transcribed_and_answered(tmp_path: Path, workspace: Path,
                                                      fake_openai: FakeOpenAI) -> None:
    fake_openai.script_transcript(NOTE, QUESTION, seconds=7.0)
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:gpt-4o-mini-transcribe",
                   transcribe_language="en") as r:
        reply = await r.ask("", note=NOTE)
        assert reply.kind == "answer" and reply.text == fake_openai.default_text
        [heard] = fake_openai.transcriptions
        assert heard.model == "gpt-4o-mini-transcribe" and heard.audio == NOTE
        assert heard.filename == "voice.ogg" and heard.content_type == "audio/ogg"
        assert heard.fields.get("language") == "en" and heard.authorization == "Bearer sk-test"
        prompt = r.chat_prompts()[-1]
        assert QUESTION in prompt, prompt  # the model got what was said ...
        assert "a voice note (7 s)" in prompt and "transcribed from speech" in prompt  # ... marked as heard
        assert "quoted data" in prompt
        [row] = await r.ledger_rows("transcribe")
        assert row["model"] == "openai:gpt-4o-mini-transcribe" and row["outcome"] == "ok"
        assert row["cost_usd"] == pytest.approx(0.003 * 7 / 60)
        assert row["sender"] == f"{CHANNEL}:owner" and json.loads(row["tags"]) == {"audio_s": 7.0}
        stored = await r.board.media.store.recent(channel=CHANNEL)
        assert stored[0].derived == QUESTION


async def test_the_same_note_is_not_paid_for_twice(tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    """A turn retried after a crash (or the same note forwarded again) takes the transcript from the cache."""
    fake_openai.script_transcript(NOTE, QUESTION)
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1") as r:
        await r.ask("", note=NOTE)
        second = await r.ask("what about this one?", note=NOTE)
        assert second.kind == "answer"
        assert len(fake_openai.transcriptions) == 1
        assert QUESTION in r.chat_prompts()[-1] and "what about this one?" in r.chat_prompts()[-1]
        assert len(await r.ledger_rows("transcribe")) == 1
        # the turn retried in the lane after a crash mid-answer: prepare runs again on the stored envelope
        envelope = Envelope(channel=CHANNEL, text="", sender="owner", chat_id="chat-owner", message_id="m9",
                            attachments=(Attachment(kind=MediaKind.VOICE, mime="audio/ogg", size=len(NOTE),
                                                    source=MediaRef(channel=CHANNEL, id="file-m1")),))
        again = await r.board.media.prepare(envelope, r.courier)
        assert again.attachments[0].derived == QUESTION and len(fake_openai.transcriptions) == 1


async def test_an_outage_falls_back_to_the_next_model(tmp_path: Path, workspace: Path,
                                                      fake_openai: FakeOpenAI) -> None:
    fake_openai.script_transcript(NOTE, QUESTION, seconds=7.0)
    fake_openai.failing_models.add("gpt-4o-mini-transcribe")
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:gpt-4o-mini-transcribe",
                   transcribe_fallbacks=["openai:whisper-1"]) as r:
        reply = await r.ask("", note=NOTE)
        assert "could not transcribe" not in reply.text
        assert QUESTION in r.chat_prompts()[-1]
        assert [t.model for t in fake_openai.transcriptions] == ["gpt-4o-mini-transcribe"] * 2 + ["whisper-1"]
        rows = await r.ledger_rows("transcribe")
        assert [(x["model"], x["outcome"], x["attempt"]) for x in rows] == [
            ("openai:gpt-4o-mini-transcribe", "server", 1), ("openai:gpt-4o-mini-transcribe", "server", 2),
            ("openai:whisper-1", "ok", 1)]
        assert rows[-1]["cost_usd"] == pytest.approx(0.006 * 7 / 60)


async def test_an_outage_is_told_and_the_caption_still_answered(tmp_path: Path, workspace: Path,
                                                                fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_transcriptions(2)  # the first try and its retry
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1") as r:
        reply = await r.ask("Here is my question about pricing", note=NOTE)
        assert reply.text.startswith("⚠️ I could not transcribe your voice note right now "
                                     "(the transcription service had a problem); please try again or type it")
        assert fake_openai.default_text in reply.text  # the caption was answered too
        assert "Here is my question about pricing" in r.chat_prompts()[-1]
        # nothing lost, and the service back: the same note again is heard
        fake_openai.script_transcript(NOTE, QUESTION)
        await r.ask("", note=NOTE)
        assert QUESTION in r.chat_prompts()[-1]


async def test_a_transcription_past_its_deadline_is_told(tmp_path: Path, workspace: Path,
                                                         fake_openai: FakeOpenAI) -> None:
    fake_openai.transcribe_delay = 5.0
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1",
                   transcribe_timeout_s=0.3) as r:
        reply = await r.ask("", note=NOTE)
        assert "I could not transcribe your voice note right now (the transcription service took too long)" \
            in reply.text
        rows = await r.ledger_rows("transcribe")
        assert [x["outcome"] for x in rows] == ["timeout", "timeout"]


async def test_without_a_transcriber_the_board_is_honest(tmp_path: Path, workspace: Path,
                                                         fake_openai: FakeOpenAI) -> None:
    async with rig(tmp_path, workspace, fake_openai) as r:
        reply = await r.ask("", note=NOTE)
        assert reply.text.startswith("⚠️ a 7 s voice note arrived, but no transcriber is set up: "
                                     "set media.transcribe_model to transcribe it")
        assert not fake_openai.transcriptions
        assert QUESTION not in reply.text


async def test_a_strangers_transcription_is_held_to_the_public_cap(tmp_path: Path, workspace: Path,
                                                                   fake_openai: FakeOpenAI) -> None:
    long_note = fake_ogg_opus(120.0, b"a long one")
    fake_openai.script_transcript(long_note, QUESTION, seconds=120.0)
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1") as r:
        r.board.set_public_terms(PublicTerms(CHANNEL, daily_usd=0.005))  # a 2 min note costs $0.012
        reply = await r.ask("", note=long_note, sender="stranger", public=True)
        assert reply.text == PUBLIC_CAP_REACHED
        assert not fake_openai.transcriptions and not fake_openai.requests  # nothing paid for

    async with rig(tmp_path / "2", workspace, fake_openai, transcribe_model="openai:whisper-1") as r:
        r.board.set_public_terms(PublicTerms(CHANNEL, daily_usd=5.0))
        fake_openai.script_transcript(NOTE, QUESTION, seconds=7.0)
        reply = await r.ask("", note=NOTE, sender="stranger", public=True)
        assert reply.kind == "answer" and QUESTION in r.chat_prompts()[-1]
        [row] = await r.ledger_rows("transcribe")
        assert row["sender"] == f"{CHANNEL}:stranger" and row["scope"] == f"public:{CHANNEL}"
        from board.memory.ledger import start_of_day

        assert await r.board.ledger.spent(since=start_of_day(), scope=f"public:{CHANNEL}") >= 0.006 * 7 / 60


# -- spoken replies ------------------------------------------------------------------------


async def test_when_spoken_to_a_voice_question_gets_a_voice_answer(tmp_path: Path, workspace: Path,
                                                                   fake_openai: FakeOpenAI) -> None:
    fake_openai.script_transcript(NOTE, QUESTION)
    fake_openai.script_text("**Yes**, raise them by 5% first.")
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1",
                   speak_replies="when_spoken_to", speech_model="openai:gpt-4o-mini-tts", speech_voice="verse") as r:
        reply = await r.ask("", note=NOTE)
        assert reply.voice is not None
        [said] = fake_openai.speeches
        assert (said.model, said.voice, said.response_format) == ("gpt-4o-mini-tts", "verse", "opus")
        assert said.input == "Yes, raise them by 5% first."  # read aloud without the Markdown
        audio = r.board.media.blobs.read(reply.voice)
        assert audio.startswith(b"OggS") and b"OpusHead" in audio
        [row] = await r.ledger_rows("speech")
        assert row["model"] == "openai:gpt-4o-mini-tts" and row["sender"] == f"{CHANNEL}:owner"
        assert row["cost_usd"] == pytest.approx(json.loads(row["tags"])["audio_s"] / 60 * 0.015, abs=1e-6)
        # the stored reply carries its voice: a redelivery or a restart sends it, never synthesises again
        stored = await r.board.db.fetchall("SELECT reply FROM inbound_messages WHERE message_id = ?", (reply.reply_to,))
        assert reply_from_json(stored[0][0]).voice == reply.voice
        await r.send("", note=NOTE, message_id=reply.reply_to)  # the service delivers it again
        typed = await r.ask("and a typed question?")  # when_spoken_to: typed questions get text only
        assert typed.voice is None
        assert len(fake_openai.speeches) == 1 and len(r.courier.delivered) == 2


async def test_long_answers_and_failures_go_out_as_text_only(tmp_path: Path, workspace: Path,
                                                             fake_openai: FakeOpenAI) -> None:
    async with rig(tmp_path, workspace, fake_openai, speak_replies="always", speech_model="openai:tts-1",
                   speak_max_chars=100) as r:
        fake_openai.script_text("A short answer.")
        short = await r.ask("typed question")
        assert short.voice is not None  # always: typed questions too
        [row] = await r.ledger_rows("speech")
        assert row["cost_usd"] == pytest.approx(len("A short answer.") * 15 / 1_000_000)
        fake_openai.script_text("word " * 40)
        long = await r.ask("another")
        assert long.voice is None and long.text.strip() == ("word " * 40).strip()  # said once, as text
        fake_openai.fail_speech(2)
        fake_openai.script_text("Still answered.")
        failed = await r.ask("third")
        assert failed.voice is None and failed.text == "Still answered."
        assert len(fake_openai.speeches) == 3  # the short one, then the failure and its retry


async def test_speak_replies_never_by_default(tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.script_transcript(NOTE, QUESTION)
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1",
                   speech_model="openai:gpt-4o-mini-tts") as r:
        reply = await r.ask("", note=NOTE)
        assert reply.voice is None and not fake_openai.speeches


def test_reply_voice_survives_the_inbox_json() -> None:
    reply = Reply(role="general", name="Chair", emoji="", text="hi", channel=CHANNEL, chat_id="c", voice="ab" * 32)
    assert reply_from_json(reply_to_json(reply)) == reply

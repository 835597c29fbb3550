"""Voice notes heard and answers spoken (issue 24, voice): through the real intake, the real board
and the official OpenAI SDK against the fake OpenAI server (transcription, speech, chat).

A small courier stands in for a channel (tests/support/voice.py: it serves the note's bytes the
way a channel's ``fetch_media`` does and records what it delivers); everything between is the
daemon's own code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.envelope import Button, Envelope, Reply
from board.media.attachment import Attachment, MediaKind, MediaRef
from board.spending.allowance import PUBLIC_CAP_REACHED, PublicTerms
from bot.intake.inbox import reply_from_json, reply_to_json
from tests.support.fakes.openai_api import FakeOpenAI, fake_ogg_opus
from tests.support.voice import CHANNEL, rig

QUESTION = "Should we raise our prices by ten percent before the festival season?"


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
        stored = await r.board.parts.media.store.recent(channel=CHANNEL)
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
        again = await r.board.parts.media.prepare(envelope, r.courier)
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
        assert reply.text.startswith("⚠️ I can't listen to voice notes here; please type your message")
        assert not fake_openai.transcriptions
        assert QUESTION not in reply.text


async def test_a_strangers_transcription_is_held_to_the_public_cap(tmp_path: Path, workspace: Path,
                                                                   fake_openai: FakeOpenAI) -> None:
    long_note = fake_ogg_opus(120.0, b"a long one")
    fake_openai.script_transcript(long_note, QUESTION, seconds=120.0)
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1") as r:
        r.board.parts.money.set_public_terms(PublicTerms(CHANNEL, daily_usd=0.005))  # a 2 min note costs $0.012
        reply = await r.ask("", note=long_note, sender="stranger", public=True)
        assert reply.text == PUBLIC_CAP_REACHED
        assert not fake_openai.transcriptions and not fake_openai.requests  # nothing paid for

    async with rig(tmp_path / "2", workspace, fake_openai, transcribe_model="openai:whisper-1") as r:
        r.board.parts.money.set_public_terms(PublicTerms(CHANNEL, daily_usd=5.0))
        fake_openai.script_transcript(NOTE, QUESTION, seconds=7.0)
        reply = await r.ask("", note=NOTE, sender="stranger", public=True)
        assert reply.kind == "answer" and QUESTION in r.chat_prompts()[-1]
        [row] = await r.ledger_rows("transcribe")
        assert row["sender"] == f"{CHANNEL}:stranger" and row["scope"] == f"public:{CHANNEL}"
        from board.spending.ledger import start_of_day

        assert await r.board.parts.ledger.spent(since=start_of_day(), scope=f"public:{CHANNEL}") >= 0.006 * 7 / 60


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
        audio = r.board.parts.media.blobs.read(reply.voice)
        assert audio.startswith(b"OggS") and b"OpusHead" in audio
        [row] = await r.ledger_rows("speech")
        assert row["model"] == "openai:gpt-4o-mini-tts" and row["sender"] == f"{CHANNEL}:owner"
        assert row["cost_usd"] == pytest.approx(json.loads(row["tags"])["audio_s"] / 60 * 0.015, abs=1e-6)
        # the stored reply carries its voice: a redelivery or a restart sends it, never synthesises again
        stored = await r.board.parts.db.fetchall("SELECT reply FROM inbound_messages WHERE message_id = ?",
                                                 (reply.reply_to,))
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


def test_reply_buttons_survive_the_inbox_json() -> None:
    reply = Reply(role="general", name="Chair", emoji="", text="ratify?", channel=CHANNEL, chat_id="c",
                  buttons=(Button("Ratify", "/ratify m-1"), Button("Veto", "/veto m-1")))
    assert reply_from_json(reply_to_json(reply)) == reply


async def test_a_model_that_cannot_listen_is_a_setup_problem(tmp_path: Path, workspace: Path,
                                                             fake_openai: FakeOpenAI,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="offline") as r:
        reply = await r.ask("and the caption", note=NOTE)
        assert "I could not transcribe your voice note right now (transcription is not set up correctly; " \
               "the owner can see why in the log)" in reply.text
        assert "cannot listen or speak" in caplog.text and not fake_openai.transcriptions


# -- a stop (or crash) mid-way -------------------------------------------------------------


async def test_stopped_while_transcribing_it_is_answered_once_after_restart(tmp_path: Path, workspace: Path,
                                                                           fake_openai: FakeOpenAI) -> None:
    fake_openai.script_transcript(NOTE, QUESTION)
    fake_openai.transcribe_delay = 60.0
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1") as r:
        mid = await r.send("", note=NOTE)
        await fake_openai.wait_for_audio(transcriptions=1)
        await r.hub.drain(0)  # the process goes away mid-transcription
        courier = r.courier
    assert not courier.delivered
    fake_openai.transcribe_delay = 0.0
    async with rig(tmp_path, workspace, fake_openai, courier=courier, resume=True,
                   transcribe_model="openai:whisper-1") as r:
        reply = await courier.reply_to(mid)
        assert QUESTION in r.chat_prompts()[-1] and reply.kind == "answer"
        await r.ask("marker", message_id="marker")
        assert [x.reply_to for x in courier.delivered] == [mid, "marker"]  # once, then the marker
        assert len(fake_openai.transcriptions) == 2  # the cut one, and the one after the restart


async def test_stopped_after_transcribing_the_note_is_not_paid_for_again(tmp_path: Path, workspace: Path,
                                                                        fake_openai: FakeOpenAI) -> None:
    fake_openai.script_transcript(NOTE, QUESTION)
    fake_openai.script_delay(60.0, "never sent")  # the model is slow: the stop comes while it thinks
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1") as r:
        mid = await r.send("", note=NOTE)
        await fake_openai.wait_for_requests(1, timeout=20)
        await r.hub.drain(0)
        courier = r.courier
    fake_openai.reset()
    async with rig(tmp_path, workspace, fake_openai, courier=courier, resume=True,
                   transcribe_model="openai:whisper-1") as r:
        await courier.reply_to(mid)
        assert QUESTION in r.chat_prompts()[-1]
        assert len(fake_openai.transcriptions) == 1  # heard once, before the stop: taken from the cache
        assert len(await r.ledger_rows("transcribe")) == 1
        await r.ask("marker", message_id="marker")
        assert [x.reply_to for x in courier.delivered] == [mid, "marker"]


def test_a_speech_model_without_its_key_is_reported_at_start() -> None:
    from bot.app import missing_keys
    from bot.config import LoadedConfig
    from bot.config.load import parse_config

    text = "llm: {model: offline}\nmedia: {transcribe_model: openai:whisper-1, speech_model: openai:tts-1}\n"
    loaded = LoadedConfig(config=parse_config(text, source="t.yaml", env={}), source=None, base_dir=Path("."))
    [problem] = missing_keys(loaded, env={})
    assert "openai is configured (openai:tts-1, openai:whisper-1) but has no API key: export OPENAI_API_KEY" \
        in problem


async def test_a_long_voice_note_reaches_the_model_whole(tmp_path: Path, workspace: Path,
                                                         fake_openai: FakeOpenAI) -> None:
    """A transcript comes as one long line; the prompt quotes outside text line by line with a cap
    per line, so a two-minute note must not lose its end."""
    said = " ".join(f"Point {n}: our margins on product line {n} are thin and we should look at it." for n in range(25))
    said += " The last thing: call the supplier on Monday."
    note = fake_ogg_opus(120.0, b"long")
    fake_openai.script_transcript(note, said, seconds=120.0)
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1") as r:
        await r.ask("", note=note)
        prompt = r.chat_prompts()[-1]
        assert "call the supplier on Monday." in prompt
        assert all(f"product line {n} " in prompt for n in range(25))


async def test_a_voice_note_after_the_budget_is_spent_is_not_transcribed(tmp_path: Path, workspace: Path,
                                                                         fake_openai: FakeOpenAI) -> None:
    """Transcribing is paid for: once budget.daily_usd is spent, a voice note is neither downloaded nor
    transcribed, and the sender gets the budget's line like for a typed question."""
    from dataclasses import replace

    fake_openai.script_transcript(NOTE, QUESTION)
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:whisper-1") as r:
        await r.ask("", note=NOTE)  # spends a little
        assert len(fake_openai.transcriptions) == 1
        r.board.parts.budget.settings = replace(r.board.parts.budget.settings, daily_usd=0.000001)
        reply = await r.ask("and this one?", note=fake_ogg_opus(5.0, b"another"))
        assert reply.kind == "error" and "budget" in reply.text
        assert len(fake_openai.transcriptions) == 1, "no transcription once the budget is spent"


async def test_a_stranger_cannot_understate_a_voice_notes_length_to_pass_the_cap(tmp_path: Path, workspace: Path,
                                                                                  fake_openai: FakeOpenAI) -> None:
    """The length that priced a stranger's transcription was the sender's: a big note declared as 1 s
    was reserved and recorded at 1 s. The bytes bound it now (about 16 kbit/s of speech)."""
    big = fake_ogg_opus(1.0) + bytes(600_000)  # says 1 s; 600 KB is some 5 minutes of a voice note
    fake_openai.script_transcript(big, QUESTION)
    async with rig(tmp_path, workspace, fake_openai, transcribe_model="openai:gpt-4o-mini-transcribe") as r:
        r.board.parts.money.set_public_terms(PublicTerms(CHANNEL, daily_usd=0.005))  # 5 min at $0.003/min = $0.015
        reply = await r.ask("", note=big, sender="stranger", public=True, duration=1.0)
        assert reply.text == PUBLIC_CAP_REACHED
        assert not fake_openai.transcriptions, "reserved at the declared 1 s, the cap let it through"

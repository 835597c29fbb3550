"""Streaming on by default (issue 38): a real ``sabha run`` on the fake Bot API and a fake OpenAI-compatible model
that streams, with the config a person writes (no ``stream:`` key under ``llm.providers.openai``). The answer
grows in one Telegram message as it is written, as nanobot's did on the same fake; ``stream: false`` still gives
the answer whole, in one message and no edits."""

from __future__ import annotations

from pathlib import Path

from tests.bot.channels.telegram.test_stream_telegram import ANSWER, ask_and_mark, bot_texts, edit_times, final_text
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER


async def test_without_a_stream_key_the_answer_grows_in_one_edited_message(
    tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script_text(ANSWER, chunk_delay=0.25)  # about 8 s of streaming
    fake_openai.script_text("MARKER DONE")
    config = write_config(tmp_path, fake, fake_openai)  # type: ignore[arg-type]
    assert "stream" not in config.read_text(encoding="utf-8")
    sabha = SabhaProcess(config)
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "how do I price my product?")
        [first] = await fake.wait_for_messages(1, timeout=30)
        await ask_and_mark(fake, fake_openai, "how do I price my product?")
    finally:
        await sabha.close()
    assert fake_openai.requests[0].body.get("stream") is True  # the model was asked to stream
    assert "print a number anywhere" not in first.text, first.text  # the first thing shown was part of it
    header = first.text.split("\n", 1)[0]
    [shown] = bot_texts(fake, "Pricing is")
    assert shown == final_text(header, ANSWER)
    assert len(edit_times(fake, first.message_id)) >= 2, "edited as the text came, then into the final answer"


async def test_stream_false_still_answers_whole(tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI) -> None:
    fake_openai.script_text(ANSWER, chunk_delay=0.05)
    fake_openai.script_text("MARKER DONE")
    config = write_config(tmp_path, fake, fake_openai)  # type: ignore[arg-type]
    line = f"      base_url: {fake_openai.base_url}\n"
    config.write_text(config.read_text(encoding="utf-8").replace(line, line + "      stream: false\n"),
                      encoding="utf-8")
    sabha = SabhaProcess(config)
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "how do I price my product?")
        [first] = await fake.wait_for_messages(1, timeout=30)
        await ask_and_mark(fake, fake_openai, "how do I price my product?")
    finally:
        await sabha.close()
    assert not fake_openai.requests[0].body.get("stream")
    assert "print a number anywhere" in first.text
    assert edit_times(fake, first.message_id) == []

"""Issue 25 (seed 001), "working on it": a turn that runs past ``board.slow_notice_s`` tells the
user once that the board is working on it, then answers; on Telegram the notice is edited into
the answer, so no notice is left behind and exactly one message carries the answer. All through
a real ``sabha run`` against the fake Bot API and a slow fake model."""

from __future__ import annotations

from pathlib import Path

from tests.daemon_support import SabhaProcess, write_config
from tests.fakes.echo_model import EchoModel
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.telegram_support import OWNER

WORKING = "working on it"


def carrying(fake: FakeTelegramAPI, text: str) -> list[str]:
    """The texts of the bot's messages in the owner's chat that now show ``text``."""
    return [str(m.get("text")) for (chat, _), m in fake.messages.items()
            if chat == OWNER and text in str(m.get("text") or "")]


async def test_a_slow_turn_says_working_on_it_once_and_the_notice_becomes_the_answer(
    tmp_path: Path, fake: FakeTelegramAPI
) -> None:
    async with EchoModel(latency=1.5) as model:
        sabha = SabhaProcess(write_config(tmp_path, fake, model, extra=["board:", "  slow_notice_s: 0.5"]))
        try:
            await sabha.start()
            fake.push_text(OWNER, OWNER, "slow question")
            [notice] = await fake.wait_for_messages(1, timeout=10)
            assert WORKING in notice.text, notice.text
            await fake.wait_for_call("editMessageText", timeout=10)
            model.latency = 0.0
            fake.push_text(OWNER, OWNER, "fast marker")  # answered after the slow one: nothing else is coming
            sent = await fake.wait_for_messages(2, timeout=10)
        finally:
            await sabha.close()
    assert [m.text for m in sent if WORKING in m.text] == [notice.text]  # the notice, once
    [edit] = fake.edited_messages
    assert edit.message_id == notice.message_id and "ECHO slow question" in edit.text
    assert len(carrying(fake, "ECHO slow question")) == 1  # exactly one message carries the answer
    assert carrying(fake, WORKING) == []  # no notice is left behind
    assert "ECHO fast marker" in sent[1].text  # a fast turn: no notice, a plain answer


async def test_a_fast_turn_sends_no_notice(tmp_path: Path, fake: FakeTelegramAPI) -> None:
    async with EchoModel(latency=0.0) as model:
        sabha = SabhaProcess(write_config(tmp_path, fake, model, extra=["board:", "  slow_notice_s: 3"]))
        try:
            await sabha.start()
            fake.push_text(OWNER, OWNER, "quick one")
            fake.push_text(OWNER, OWNER, "quick two")
            sent = await fake.wait_for_messages(2, timeout=10)
        finally:
            await sabha.close()
    assert ["ECHO quick" in m.text for m in sent] == [True, True]
    assert fake.edited_messages == [] and not any(WORKING in m.text for m in sent)

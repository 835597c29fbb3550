"""A Telegram reply in several messages whose part 2 was cut off on the wire (the request left, its answer was
lost) is sent once more from that part on, marked, as new messages: part 1 (which certainly arrived) is not
repeated, and the marked copy is never an edit of the answer's old streamed draft. Through a real ``sabha run``
streaming from the fake OpenAI API into the fake Bot API, which drops the answer to part 2's ``sendMessage``.

The same after a SIGKILL: a reply in three messages, Sabha killed once part 1 was confirmed and while part 2's
request is held on the wire (the fake posts it after the kill). How far the delivery got is stored as each part's
answer comes back, so the restarted Sabha sends part 2 once more, marked, and part 3 plainly; part 1, which
Telegram confirmed, is never sent again (before, the marked copy repeated the whole reply)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from tests.bot.channels.telegram.test_stream_telegram import ask_and_mark, bot_texts, streaming_config
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.kill import MARK, HoldingTelegramAPI, settled, wait_for
from tests.support.telegram import OWNER, TOKEN

FIRST, SECOND = "PARTONE", "PARTTWO"
#: About 5,600 characters: over Telegram's 4,096 limit, two messages, FIRST in the first, SECOND in the last.
LONG = "\n".join([f"{FIRST} opens the plan."]
                 + [f"Step {i}: check the numbers for week {i} with a customer, and write down what changed."
                    for i in range(1, 66)]
                 + [f"{SECOND} closes the plan."])


def drop_the_answer_to(fake: FakeTelegramAPI, needle: str) -> None:
    """The first ``sendMessage`` carrying ``needle`` is posted, and its answer never reaches the client."""
    send = fake._methods["sendmessage"]
    dropped: list[bool] = []

    async def posted_then_cut(params: dict[str, Any]) -> Any:
        result = await send(params)
        if needle in str(params.get("text") or "") and not dropped:
            dropped.append(True)
            fake.drop_next("sendMessage")
        return result

    fake._methods["sendmessage"] = posted_then_cut


async def test_a_cut_off_second_part_is_sent_once_more_alone_marked_and_not_over_the_draft(
    tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script_text(LONG, chunk_delay=0.01)  # streamed: a draft is out before the answer is delivered
    fake_openai.script_text("MARKER DONE")
    drop_the_answer_to(fake, SECOND)
    sabha = SabhaProcess(streaming_config(tmp_path, fake, fake_openai))
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "give me the long plan")
        await fake.wait_until(lambda: bot_texts(fake, SECOND), "part 2 posted", timeout=120)
        await ask_and_mark(fake, fake_openai, "give me the long plan")  # after the marker, nothing else is coming
    finally:
        await sabha.close()
    firsts, seconds = bot_texts(fake, FIRST), bot_texts(fake, SECOND)
    assert len(firsts) == 1 and MARK not in firsts[0], firsts  # part 1 once, never repeated
    assert len([t for t in seconds if MARK not in t]) == 1, seconds  # part 2 once...
    assert len([t for t in seconds if MARK in t]) == 1, seconds  # ...plus one marked copy of it (never two)
    marked_edits = [p for m, p in fake.calls if m == "editMessageText" and MARK in str(p.get("text") or "")]
    assert marked_edits == [], marked_edits  # a marked copy is a new message, never an edit of the old draft


THIRD = "PARTTHREE"
_FILLER = "lorem ipsum dolor "
#: One line (the echo model answers a question's first line) of about 9,600 characters: three messages, FIRST in
#: the first, SECOND in the middle of the second, THIRD in the last.
LONG_QUESTION = f"Q700 {FIRST} " + _FILLER * 330 + f"{SECOND} " + _FILLER * 200 + THIRD


def echoed(fake: FakeTelegramAPI, needle: str) -> tuple[list[str], list[str]]:
    """The bot's messages carrying ``needle``: (plain, marked as possibly repeated)."""
    texts = [m.text for m in fake.sent_messages if needle in m.text]
    return [t for t in texts if MARK not in t], [t for t in texts if MARK in t]


async def test_killed_while_part_two_is_on_the_wire_only_part_two_is_sent_again_marked(tmp_path: Path) -> None:
    async with HoldingTelegramAPI(token=TOKEN) as telegram, EchoModel(latency=0.05) as model:
        sabha = SabhaProcess(write_config(tmp_path, telegram, model))
        db = tmp_path / "sessions" / "sabha.db"
        try:
            await sabha.start()
            telegram.hold("sendMessage", containing=SECOND)
            telegram.push_update(telegram.build_text_update(OWNER, OWNER, LONG_QUESTION, is_forum=False,
                                                            chat_type="private"))
            await wait_for(lambda: telegram.waiting("sendMessage") == 1 and echoed(telegram, FIRST)[0],
                           "part 1 posted and confirmed, part 2's request held on the wire")
            await sabha.signal(signal.SIGKILL)
            telegram.release("sendMessage", post=True)  # Telegram got part 2 whole: it is posted after the kill
            await wait_for(lambda: echoed(telegram, SECOND)[0], "part 2 posted")
            await sabha.start()
            await wait_for(lambda: settled(db, ["Q700"]), "the long question answered or given up")
            telegram.push_update(telegram.build_text_update(OWNER, OWNER, "Q701 last one", is_forum=False,
                                                            chat_type="private"))
            await wait_for(lambda: echoed(telegram, "Q701")[0], "the marker answered: nothing else is coming")
        finally:
            await sabha.close()
        firsts, seconds, thirds = echoed(telegram, FIRST), echoed(telegram, SECOND), echoed(telegram, THIRD)
        assert (len(firsts[0]), len(firsts[1])) == (1, 0), f"part 1 was sent again: {len(firsts[1])} marked"
        assert len(seconds[0]) == 1 and len(seconds[1]) <= 1, seconds  # part 2 once, plus one marked copy at most
        assert (len(thirds[0]) + len(thirds[1])) == 1, thirds  # part 3 (never sent before the kill) once

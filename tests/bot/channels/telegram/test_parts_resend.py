"""A Telegram reply in several messages whose part 2 was cut off on the wire (the request left, its answer was
lost) is sent once more from that part on, marked, as new messages: part 1 (which certainly arrived) is not
repeated, and the marked copy is never an edit of the answer's old streamed draft. Through a real ``sabha run``
streaming from the fake OpenAI API into the fake Bot API, which drops the answer to part 2's ``sendMessage``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.bot.channels.telegram.test_stream_telegram import ask_and_mark, bot_texts, streaming_config
from tests.support.daemon import SabhaProcess
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.kill import MARK
from tests.support.telegram import OWNER

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

"""A streamed answer on Discord, on a real ``sabha run``: posted with its first words, edited as the model writes
(never more than once a second per message), a 429 on an edit waited out as its ``retry_after`` says, and the final
answer edited over the draft: one message, the whole answer."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.daemon import SabhaProcess
from tests.support.discord import FINANCE, OWNER, env, places, write_config
from tests.support.fakes.discord_api import FakeDiscord
from tests.support.fakes.openai_api import FakeOpenAI

ANSWER = " ".join(f"word{i}" for i in range(70)) + " RUNWAY-END"
RETRY_AFTER = 1.5


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        yield places(server)


async def test_an_answer_streams_by_edits_within_the_rate_limit_and_a_429_is_waited_out(
        tmp_path: Path, fake: FakeDiscord, fake_openai: FakeOpenAI) -> None:
    fake_openai.script_text(ANSWER, chunk_delay=0.08)  # about 6 s of writing
    fake.rate_limit_next("PATCH", "/messages/", retry_after=RETRY_AFTER)  # the first edit is refused with a 429
    sabha = SabhaProcess(write_config(tmp_path, fake, fake_openai.base_url, stream=True), env=env())
    try:
        await sabha.start()
        await sabha.wait_for_log(r"discord: connected to the gateway")
        q = fake.user_says(FINANCE, OWNER, "how long is our runway?")
        await fake.wait_for(lambda: any("RUNWAY-END" in m.content for m in fake.in_channel(q["id"])),
                            "the whole answer in the thread")
    finally:
        await sabha.close()
    posted = fake.in_channel(q["id"])
    assert len(posted) == 1, [m.content for m in posted]  # one message: the draft became the answer
    answer = posted[0]
    assert answer.content == f"**💰 Finance**\n{ANSWER}"
    assert len(answer.edits) >= 2 and answer.edits[0].endswith(" …") and "RUNWAY-END" not in answer.edits[0]
    edits = [(t, status) for method, path, t, status in fake.request_times
             if method == "PATCH" and path.endswith(f"/messages/{answer.id}")]
    refused = [t for t, status in edits if status == 429]
    assert len(refused) == 1
    after = [t for t, status in edits if status == 200 and t > refused[0]]
    assert after and after[0] - refused[0] >= RETRY_AFTER * 0.9  # discord.py waited out the retry_after
    streamed = [t for t, status in edits if status == 200][:-1]  # the last edit is the answer, delivered at once
    assert all(b - a >= 0.9 for a, b in itertools.pairwise(streamed)), streamed  # <= one a second

"""What a restart reads from the history lands where it was asked, and none of it is skipped, on a real
``sabha run`` against the fake Discord (discord.py the client).

- A message written in a board thread or an advisor's channel while Sabha was down is answered in that thread (or
  in the thread its question starts), not in its author's DM: history read through a bare partial channel carries
  no server, which made every such message look like a direct message.
- A live message that arrives between ``READY`` and discord.py's ``on_ready`` (it waits for the server's channels)
  waits behind the catch-up: stored first, it moved its place's mark past the messages sent while Sabha was down,
  and those were never read.
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.daemon import SabhaProcess
from tests.support.discord import CRITIC, FINANCE, OWNER, answered, env, places, write_config
from tests.support.fakes.discord_api import FakeDiscord
from tests.support.fakes.echo_model import EchoModel


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        yield places(server)


def _where(fake: FakeDiscord, marker: str) -> list[str]:
    """The channels the answers to ``marker`` were posted in."""
    return [m.channel_id for m in fake.sent if "ECHO" in m.content and marker in m.content]


async def test_what_was_sent_in_a_thread_or_an_advisors_channel_while_down_is_answered_there(
        tmp_path: Path, fake: FakeDiscord, echo_model: EchoModel) -> None:
    sabha = SabhaProcess(write_config(tmp_path, fake, echo_model.base_url), env=env())
    dm = fake.dm_channel(OWNER)
    try:
        await sabha.start()
        await sabha.wait_for_log(r"discord: connected to the gateway")
        thread = fake.user_says(FINANCE, OWNER, "Q001 opening the thread")["id"]
        await fake.wait_for(lambda: answered(fake)["Q001"] == 1, "the thread's first answer")
        fake.user_says(thread, OWNER, "Q002 in the thread")
        fake.user_says(CRITIC, OWNER, "Q003 in critic's channel")
        await fake.wait_for(lambda: answered(fake)["Q002"] == 1 and answered(fake)["Q003"] == 1,
                            "the answers before the kill")  # posted: both places' marks are stored
        await sabha.signal(signal.SIGKILL)
        fake.user_says(thread, OWNER, "Q004 in the thread while Sabha was down", dispatch=False)
        later = fake.user_says(CRITIC, OWNER, "Q005 in critic's channel while Sabha was down", dispatch=False)
        await sabha.start()
        await fake.wait_for(lambda: answered(fake)["Q004"] >= 1 and answered(fake)["Q005"] >= 1,
                            "the answers to what was sent while Sabha was down")
        fake.user_says(dm, OWNER, "Q099 sentinel")
        await fake.wait_for(lambda: answered(fake)["Q099"] == 1, "the sentinel's answer")
    finally:
        await sabha.close()
    assert _where(fake, "Q004") == [thread], "the thread's message was not answered in the thread"
    assert _where(fake, "Q005") == [later["id"]], "the advisor channel's message did not start its thread"
    assert fake.in_channel(dm) and all("Q004" not in m.content and "Q005" not in m.content for m in fake.in_channel(dm))


async def test_a_live_message_before_on_ready_does_not_hide_what_was_sent_while_down(
        tmp_path: Path, fake: FakeDiscord, echo_model: EchoModel) -> None:
    sabha = SabhaProcess(write_config(tmp_path, fake, echo_model.base_url), env=env())
    dm = fake.dm_channel(OWNER)
    try:
        await sabha.start()
        await sabha.wait_for_log(r"discord: connected to the gateway")
        fake.user_says(dm, OWNER, "Q001 before the kill")
        await fake.wait_for(lambda: answered(fake)["Q001"] == 1, "the first answer")  # the DM's mark is stored
        await sabha.signal(signal.SIGKILL)
        for i in range(2, 5):
            fake.user_says(dm, OWNER, f"Q00{i} while Sabha was down", dispatch=False)
        # live, while discord.py waits for the server's channels after READY (before on_ready and the catch-up)
        fake.after_ready = lambda: fake.user_says(dm, OWNER, "Q005 just after READY")
        await sabha.start()
        await fake.wait_for(lambda: answered(fake)["Q005"] >= 1, "the live message's answer")
        fake.user_says(dm, OWNER, "Q099 sentinel")
        await fake.wait_for(lambda: answered(fake)["Q099"] == 1, "the sentinel's answer")
    finally:
        await sabha.close()
    seen = answered(fake)
    assert [seen[f"Q00{i}"] for i in range(1, 6)] == [1, 1, 1, 1, 1], seen

"""Discord's durability on a real ``sabha run``: the gateway has no acknowledgement, so a message is claimed in the
intake when it arrives and answered once whatever happens after.

- A dropped gateway: ``/readyz`` says Discord is unreachable while it is down; discord.py RESUMEs, the fake replays
  what was missed (and, at least once, some it had already delivered), every message is answered once and
  ``/readyz`` is ready again.
- A forum post made while Sabha was down (a thread nothing was stored from) is found among the server's active
  threads after the restart and answered once, in its thread.
- ``kill -9`` mid-burst (100 messages from several users in DMs, advisors' channels and threads): the fake keeps
  what was sent meanwhile in the channels' history, Sabha restarts with a new session (nothing replayed) and reads
  each place's history after the last message it stored: 0 lost, 0 answered twice (a sentinel after).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientSession, ClientTimeout

from tests.support.daemon import SabhaProcess
from tests.support.discord import CRITIC, FINANCE, OWNER, answered, env, places, write_config
from tests.support.fakes.discord_api import FakeDiscord
from tests.support.fakes.echo_model import EchoModel

pytestmark = pytest.mark.xdist_group("bursts")

USERS = [f"12000000000000000{n:02d}" for n in range(1, 7)]
BURST = 100


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        yield places(server)


async def _readyz(port: int) -> tuple[int, str]:
    async with ClientSession(timeout=ClientTimeout(total=10)) as http, \
            http.get(f"http://127.0.0.1:{port}/readyz") as resp:
        return resp.status, await resp.text()


async def _until_ready(sabha: SabhaProcess, ready: bool) -> str:
    assert sabha.port is not None
    for _ in range(600):
        status, body = await _readyz(sabha.port)
        if (status == 200) is ready:
            return body
        await asyncio.sleep(0.2)
    raise AssertionError(f"/readyz never became {'ready' if ready else 'not ready'}: {body}")


async def test_a_dropped_gateway_resumes_and_replayed_messages_are_answered_once(
        tmp_path: Path, fake: FakeDiscord, echo_model: EchoModel) -> None:
    sabha = SabhaProcess(write_config(tmp_path, fake, echo_model.base_url), env=env())
    try:
        await sabha.start()
        await sabha.wait_for_log(r"discord: connected to the gateway")
        await _until_ready(sabha, True)
        first = [fake.user_says(fake.dm_channel(OWNER), OWNER, f"Q{i:03d} before the drop") for i in range(3)]
        await fake.wait_for(lambda: len(answered(fake)) == 3, "the first three answers")

        fake.gateway_down()
        fake.replay_extra = 100  # the replay starts early: the messages already answered come again
        await fake.drop()
        body = await _until_ready(sabha, False)
        assert "discord" in body and "gateway" in body, body
        for i in range(3, 8):  # sent while the gateway was down: only a RESUME's replay brings them
            fake.user_says(FINANCE if i % 2 else fake.dm_channel(OWNER), OWNER, f"Q{i:03d} while it was down")
        fake.gateway_up()
        await sabha.wait_for_log(r"gateway session resumed")
        await _until_ready(sabha, True)
        fake.user_says(CRITIC, OWNER, "Q099 sentinel")
        await fake.wait_for(lambda: answered(fake)["Q099"] == 1, "the sentinel's answer")
        await asyncio.sleep(0.5)
    finally:
        await sabha.close()
    seen = answered(fake)
    assert fake.resumes >= 1 and fake.identifies == 1  # resumed, not a new session
    assert {f"Q{i:03d}" for i in range(8)} | {"Q099"} == set(seen)
    assert [q for q, n in seen.items() if n > 1] == []
    assert first[0]["id"] not in [m.reference for m in fake.sent[3:]]  # the replayed first messages: not again
    assert "delivered again; already stored" in sabha.log  # the replay did bring them: the intake skipped them


async def test_kill_9_mid_burst_then_restart_loses_nothing_and_answers_nothing_twice(
        tmp_path: Path, fake: FakeDiscord, echo_model: EchoModel) -> None:
    echo_model.latency = 0.3
    sabha = SabhaProcess(write_config(tmp_path, fake, echo_model.base_url, users=USERS), env=env())
    dms = {u: fake.dm_channel(u) for u in USERS}
    threads: list[str] = []
    try:
        await sabha.start()
        await sabha.wait_for_log(r"discord: connected to the gateway")
        for u in USERS[:2]:  # two conversations that are threads (an advisor's channel), started before the burst
            q = fake.user_says(FINANCE, u, f"T-{u[-2:]} opening question")
            threads.append(q["id"])
        await fake.wait_for(lambda: all(fake.in_channel(t) for t in threads), "the two threads' first answers")

        def say(i: int) -> None:
            user = USERS[i % len(USERS)]
            where = [dms[user], *threads, FINANCE, CRITIC][i % (len(threads) + 3)]
            fake.user_says(where, user, f"Q{i:03d} what do you think?")

        for i in range(BURST // 2):
            say(i)
            await asyncio.sleep(0.02)
        await fake.wait_for(lambda: len(answered(fake)) >= 10, "some answers before the kill")
        assert len(answered(fake)) < BURST // 2, "everything was answered before the kill: not mid-burst"
        await sabha.signal(signal.SIGKILL)
        for i in range(BURST // 2, BURST):  # sent while Sabha is down: only the history has them
            say(i)
        await sabha.start()
        await sabha.wait_for_log(r"discord: connected to the gateway")
        await fake.wait_for(lambda: len({q for q in answered(fake) if q.startswith("Q")}) >= BURST,
                            "every question answered", timeout=300)
        fake.user_says(dms[USERS[0]], USERS[0], "Q999 sentinel after")
        await fake.wait_for(lambda: answered(fake)["Q999"] == 1, "the sentinel's answer")
        await asyncio.sleep(1.0)
    finally:
        await sabha.close()
    seen = answered(fake)
    lost = [f"Q{i:03d}" for i in range(BURST) if seen[f"Q{i:03d}"] == 0]
    twice = [q for q, n in seen.items() if n > 1]
    print(f"\ndiscord, kill -9 mid-burst: {BURST} questions, lost {len(lost)}, answered twice {len(twice)}; "
          f"identifies {fake.identifies}")
    assert (lost, twice) == ([], [])
    assert fake.identifies == 2  # the restart was a new session: what was missed came from the history


async def test_readyz_says_when_discord_cannot_be_reached_and_recovers(
        tmp_path: Path, fake: FakeDiscord, echo_model: EchoModel) -> None:
    sabha = SabhaProcess(write_config(tmp_path, fake, echo_model.base_url), env=env())
    try:
        await sabha.start()
        await _until_ready(sabha, True)
        await fake.stop()  # REST and the gateway gone: the connection refused
        body = await _until_ready(sabha, False)
        assert "channel discord" in body, body
        await fake.restart()
        await _until_ready(sabha, True)
        fake.user_says(fake.dm_channel(OWNER), OWNER, "Q001 are you back?")
        await fake.wait_for(lambda: answered(fake)["Q001"] == 1, "the answer after Discord came back")
    finally:
        await sabha.close()


def _status_of(root: Path, marker: str) -> str | None:
    import sqlite3

    with sqlite3.connect(f"file:{root / 'sessions' / 'sabha.db'}?mode=ro", uri=True, timeout=10) as db:
        rows = db.execute("SELECT status, envelope FROM inbound_messages WHERE channel = 'discord'").fetchall()
    return next((status for status, envelope in rows if marker in (envelope or "")), None)


async def test_a_reply_whose_request_left_before_a_kill_is_sent_once_more_marked(
        tmp_path: Path, fake: FakeDiscord, echo_model: EchoModel) -> None:
    sabha = SabhaProcess(write_config(tmp_path, fake, echo_model.base_url), env=env())
    try:
        await sabha.start()
        await sabha.wait_for_log(r"discord: connected to the gateway")
        fake.hold_posts()  # the answer's request reaches Discord and gets no answer
        fake.user_says(fake.dm_channel(OWNER), OWNER, "Q001 held on the way")
        await fake.wait_for(lambda: fake.held == 1, "the answer's request at the fake")
        for _ in range(600):  # the durable mark: "sending" is in the db before the request left
            if _status_of(tmp_path, "Q001") == "sending":
                break
            await asyncio.sleep(0.1)
        assert _status_of(tmp_path, "Q001") == "sending"
        await sabha.signal(signal.SIGKILL)
        fake.release_posts()  # the held request posted nothing
        await sabha.start()
        await fake.wait_for(lambda: answered(fake)["Q001"] >= 1, "the answer sent once more")
        fake.user_says(fake.dm_channel(OWNER), OWNER, "Q002 sentinel")
        await fake.wait_for(lambda: answered(fake)["Q002"] == 1, "the sentinel's answer")
    finally:
        await sabha.close()
    copies = [m.content for m in fake.sent if "Q001" in m.content]
    assert len(copies) == 1 and "Sent again" in copies[0], copies  # once, marked as possibly repeated


async def test_after_a_restart_messages_older_than_catch_up_hours_are_logged_not_answered(
        tmp_path: Path, fake: FakeDiscord, echo_model: EchoModel) -> None:
    import time

    from tests.support.fakes.discord_api import snowflake

    hour = 3600.0
    sabha = SabhaProcess(write_config(tmp_path, fake, echo_model.base_url, discord=["catch_up_hours: 1"]), env=env())
    dm = fake.dm_channel(OWNER)
    try:
        await sabha.start()
        await sabha.wait_for_log(r"discord: connected to the gateway")
        # the clock of Discord's ids: a message stored three hours ago, so history is read after it
        fake.user_says(dm, OWNER, "Q001 long ago", message_id=snowflake(time.time() - 3 * hour))
        await fake.wait_for(lambda: answered(fake)["Q001"] == 1, "the first answer")
        await sabha.signal(signal.SIGKILL)
        fake.user_says(dm, OWNER, "Q002 two hours ago", message_id=snowflake(time.time() - 2 * hour))
        fake.user_says(dm, OWNER, "Q003 a minute ago", message_id=snowflake(time.time() - 60))
        await sabha.start()
        await fake.wait_for(lambda: answered(fake)["Q003"] == 1, "the recent message's answer")
        line = await sabha.wait_for_log(r"older than discord.catch_up_hours")
        fake.user_says(dm, OWNER, "Q004 sentinel")
        await fake.wait_for(lambda: answered(fake)["Q004"] == 1, "the sentinel's answer")
    finally:
        await sabha.close()
    assert answered(fake)["Q002"] == 0 and "1 message(s)" in line


async def test_a_forum_post_made_while_sabha_was_down_is_answered_once_after_the_restart(
        tmp_path: Path, fake: FakeDiscord, echo_model: EchoModel) -> None:
    from tests.support.discord import FORUM

    sabha = SabhaProcess(write_config(tmp_path, fake, echo_model.base_url), env=env())
    try:
        await sabha.start()
        await sabha.wait_for_log(r"discord: connected to the gateway")
        fake.user_says(fake.dm_channel(OWNER), OWNER, "Q001 before the kill")
        await fake.wait_for(lambda: answered(fake)["Q001"] == 1, "the first answer")
        await sabha.signal(signal.SIGKILL)
        # a new post in the forum while Sabha is down: a thread nothing was ever stored from
        post = fake.new_post(FORUM, OWNER, "Q002 posted while Sabha was down", dispatch=False)
        asked = fake.active_threads_asked
        await sabha.start()
        await fake.wait_for(lambda: answered(fake)["Q002"] == 1, "the new post's answer")
        assert fake.active_threads_asked > asked, "the server's active threads were asked for"
        assert [m.channel_id for m in fake.sent if "Q002" in m.content] == [post], "answered in the post's thread"
        fake.user_says(post, OWNER, "Q003 sentinel in the post")
        await fake.wait_for(lambda: answered(fake)["Q003"] == 1, "the sentinel's answer")
    finally:
        await sabha.close()
    assert answered(fake)["Q002"] == 1 and answered(fake)["Q001"] == 1

"""Who and what costs the board something on Discord, on a real ``sabha run`` against the fake Discord (discord.py
the client).

- A busy channel the board does not watch costs at most one look-up at Discord (``GET /channels/{id}``), not one
  per message (the receiver is serial: each look-up delayed the board's own messages).
- A person who may not use the board (allowlist mode) leaves no trace: no place rows, no thread's advisor fixed by
  their first words.
- Public mode: what strangers spent is read again while running, so spend recorded after the start (here a row in
  the state db's ledger, as a second writer would leave it) trips the daily cap at the door.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.channels.public_limits import CAP_REACHED
from tests.support.daemon import SabhaProcess
from tests.support.discord import BOARD, FORUM, OWNER, STRANGER, answered, env, places, write_config
from tests.support.fakes.discord_api import GUILD_ID, ChannelKind, FakeDiscord, snowflake
from tests.support.fakes.echo_model import EchoModel


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        yield places(server)


def _rows(root: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(f"file:{root / 'sessions' / 'sabha.db'}?mode=ro", uri=True, timeout=10) as db:
        return db.execute(sql).fetchall()


async def test_a_busy_unwatched_channel_is_looked_up_once(tmp_path: Path, fake: FakeDiscord,
                                                          echo_model: EchoModel) -> None:
    elsewhere = snowflake()  # a thread under #general, which the board does not watch either
    fake.add_channel(elsewhere, ChannelKind.PUBLIC_THREAD, name="chatter", parent_id=GUILD_ID)
    sabha = SabhaProcess(write_config(tmp_path, fake, echo_model.base_url), env=env())
    try:
        await sabha.start()
        await sabha.wait_for_log(r"discord: connected to the gateway")
        for i in range(50):
            fake.user_says(GUILD_ID, OWNER, f"chatter {i} in #general")
            fake.user_says(elsewhere, OWNER, f"chatter {i} in a thread of #general")
        fake.user_says(fake.dm_channel(OWNER), OWNER, "Q099 sentinel")  # after them all, in the same order
        await fake.wait_for(lambda: answered(fake)["Q099"] == 1, "the sentinel's answer")
    finally:
        await sabha.close()
    looked_up = {cid: fake.requests.count(("GET", f"/channels/{cid}")) for cid in (GUILD_ID, elsewhere)}
    assert all(n <= 1 for n in looked_up.values()), looked_up
    assert not any("chatter" in m.content for m in fake.sent)


async def test_a_stranger_leaves_no_places_and_fixes_no_threads_advisor(tmp_path: Path, fake: FakeDiscord,
                                                                       echo_model: EchoModel) -> None:
    post = snowflake()  # a forum post a stranger opens by addressing finance
    fake.add_channel(post, ChannelKind.PUBLIC_THREAD, name="a post", parent_id=FORUM)
    sabha = SabhaProcess(write_config(tmp_path, fake, echo_model.base_url), env=env())
    try:
        await sabha.start()
        await sabha.wait_for_log(r"discord: connected to the gateway")
        asked = fake.user_says(BOARD, STRANGER, "@finance Q001 what do we earn?", name="Eve")
        fake.user_says(post, STRANGER, "@finance Q002 and the margins?", name="Eve")
        fake.user_says(fake.dm_channel(STRANGER), STRANGER, "Q003 hello?", name="Eve")
        fake.user_says(post, OWNER, "Q004 what does the chair think?", name="Ada")
        await fake.wait_for(lambda: answered(fake)["Q004"] == 1, "the owner's answer in the post")
    finally:
        await sabha.close()
    rows = {str(r[0]): r[1] for r in _rows(tmp_path, "SELECT channel_id, role FROM discord_places")}
    assert asked["id"] not in rows and fake.dm_channel(STRANGER) not in rows, rows  # the stranger's: none
    assert rows.get(post, "missing") is None, rows  # the owner's plain words: the chair's thread, not finance's
    assert [q for q in answered(fake)] == ["Q004"]
    assert "Finance" not in fake.in_channel(post)[0].content.split("\n")[0]


async def test_public_mode_trips_the_daily_cap_on_spend_recorded_after_the_start(
        tmp_path: Path, fake: FakeDiscord, echo_model: EchoModel) -> None:
    config = write_config(tmp_path, fake, echo_model.base_url,
                          discord=["access: public", "public_rate_per_minute: 600", "public_daily_usd: 0.5"])
    sabha = SabhaProcess(config, env=env())
    dm = fake.dm_channel(STRANGER)
    try:
        await sabha.start()
        await sabha.wait_for_log(r"discord: connected to the gateway")
        fake.user_says(dm, STRANGER, "Q001 under the cap", name="Eve")
        await fake.wait_for(lambda: answered(fake)["Q001"] == 1, "the answer under the cap")
        with sqlite3.connect(tmp_path / "sessions" / "sabha.db", timeout=30) as db:  # strangers' spend, recorded now
            db.execute("INSERT INTO llm_calls(ts, provider, model, outcome, cost_usd, scope) VALUES (?, ?, ?, ?, ?, ?)",
                       (datetime.now(UTC).isoformat(), "openai", "gpt", "ok", 0.6, "public:discord"))
        for i in range(2, 300):  # the spend is re-read at most once a second: until a message meets the cap
            fake.user_says(dm, STRANGER, f"Q{i:03d} still there?", name="Eve")
            await fake.wait_for(lambda n=i: len(fake.in_channel(dm)) == n, f"the reply to Q{i:03d}")
            if CAP_REACHED in fake.in_channel(dm)[-1].content:
                break
    finally:
        await sabha.close()
    assert CAP_REACHED in fake.in_channel(dm)[-1].content, "the cap never tripped"
    refused = f"Q{len(fake.in_channel(dm)):03d}"
    assert answered(fake)[refused] == 0

"""What a burst of webhooks does on its way to the acknowledgement, counted on a real ``sabha run`` (Slack's Events
API, signed DMs from many people at once): each 200 leaves only once its event's row is committed (read from a
second connection the moment the 200 arrives), and the burst is stored in a few transactions, not one each (group
commit: ``sabha_intake_commits`` on /metrics). To make the count exact, the state db's write lock is held while the
burst arrives, until every event of it waits for its commit (``sabha_intake_waiting``); once it is free they are
stored in at most two: the transaction that was waiting for the lock, and one for all the rest. And what a receipt asks
for in the background (the names of senders seen for the first time, ``users.info``) waits until the burst is
acknowledged, as the answers do."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from yarl import URL

from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.slack_api import SlackEventPoster, event_callback, message_event, sign
from tests.support.ops import scrape, total
from tests.support.slack import OWNER, OWNER_DM, answered, next_ts, running_slack, say
from tests.support.telegram import eventually

COUNT = 40


async def test_a_burst_is_acknowledged_only_once_stored_and_stored_in_two_commits(tmp_path: Path,
                                                                                   echo_model: EchoModel) -> None:
    users = [f"U0ACK{n:03d}" for n in range(COUNT)]
    async with running_slack(tmp_path, echo_model, allowed=(OWNER, *users)) as (sabha, slack, poster):
        assert sabha.port is not None
        await say(poster, OWNER_DM, OWNER, "Q001 first", channel_type="im")
        await eventually(lambda: answered(slack)["Q001"] == 1, "the first answer")
        before = total(await scrape(sabha.port), "sabha_intake_commits_total", channel="slack")
        bodies = [event_callback(message_event(f"D0ACK{n:03d}", user, f"Q{100 + n} what now?", next_ts(),
                                               channel_type="im")) for n, user in enumerate(users)]
        db = tmp_path / "sessions" / "sabha.db"
        reader = sqlite3.connect(db, isolation_level=None, timeout=30)
        blocker = sqlite3.connect(db, isolation_level=None, timeout=30)
        stored_at_ack: list[str | None] = []

        async def post(burst: SlackEventPoster, body: dict[str, Any]) -> None:
            status, text = await burst.post(body)
            assert status == 200, (status, text)
            event = body["event"]
            row = reader.execute("SELECT status FROM inbound_messages WHERE channel = 'slack' AND message_id = ?",
                                 (f"{event['channel']}/{event['ts']}",)).fetchone()
            stored_at_ack.append(None if row is None else str(row[0]))

        async def waiting() -> bool:
            return total(await scrape(sabha.port), "sabha_intake_waiting", channel="slack") == COUNT

        try:
            async with SlackEventPoster(poster.url, ack_timeout_s=60) as burst:
                blocker.execute("BEGIN IMMEDIATE")  # nobody else may write: the burst waits for its commit
                try:
                    posts = [asyncio.create_task(post(burst, body)) for body in bodies]
                    await eventually(waiting, f"all {COUNT} events waiting for their commit")
                    assert stored_at_ack == [], "acknowledged before it could be stored"
                finally:
                    blocker.execute("ROLLBACK")
                await asyncio.gather(*posts)
        finally:
            blocker.close()
            reader.close()
        assert len(stored_at_ack) == COUNT and None not in stored_at_ack, stored_at_ack
        commits = total(await scrape(sabha.port), "sabha_intake_commits_total", channel="slack") - before
        assert 1 <= commits <= 2, f"{COUNT} events stored in {commits} commits"
        await eventually(lambda: len([q for q, n in answered(slack).items() if q != "Q001"]) == COUNT,
                         "every event answered")
        assert set(answered(slack).values()) == {1}, answered(slack)


async def test_the_names_of_a_burst_of_first_time_senders_are_asked_once_the_burst_is_acknowledged(
        tmp_path: Path, echo_model: EchoModel) -> None:
    """A hundred people writing for the first time at once used to cost a hundred ``users.info`` calls on the event
    loop among their own acknowledgements (the first round of ``benchmarks/webhook.py --channel slack``: its p99 was
    7-10x the bare handler's, later rounds ~1.2x). A name is not needed before the sender's answer, whose turn waits
    for the burst anyway (the lanes' hold: until receipts are quiet, at most ``max_defer``, 1 s, from the first).
    One event's body is sent slowly, so the burst's receipts stay open while the others are acknowledged."""
    users = [f"U0NEW{n:03d}" for n in range(COUNT)]
    async with running_slack(tmp_path, echo_model, allowed=(OWNER, *users)) as (sabha, slack, poster):
        assert sabha.port is not None
        await say(poster, OWNER_DM, OWNER, "Q001 first", channel_type="im")
        await eventually(lambda: answered(slack)["Q001"] == 1, "the first answer")
        bodies = [event_callback(message_event(f"D0NEW{n:03d}", user, f"Q{100 + n} who am I?", next_ts(),
                                               channel_type="im")) for n, user in enumerate(users)]
        slow = json.dumps(event_callback(message_event(OWNER_DM, OWNER, "Q002 slowly", next_ts(),
                                                       channel_type="im"))).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in sign(slow).items())
        url = URL(poster.url)

        def asked() -> list[float]:
            return [call.at for call in slack.calls_of("users.info") if call.args.get("user") in users]

        reader, writer = await asyncio.open_connection("127.0.0.1", sabha.port)
        try:
            first = time.monotonic()  # the daemon's burst begins after this: its hold lasts past first + 1 s
            writer.write(f"POST {url.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(slow)}\r\n"
                         f"{head}\r\n".encode() + slow[:10])
            await writer.drain()
            async with SlackEventPoster(poster.url, ack_timeout_s=60) as burst:
                statuses = await asyncio.gather(*(burst.post(body) for body in bodies))
            # Lookups started among the receipts reach the fake at once; give them until the hold's bound.
            await eventually(lambda: asked() or time.monotonic() >= first + 1.0, "a lookup or a second")
            released = time.monotonic()
            writer.write(slow[10:])
            await writer.drain()
            assert (await reader.readline()).startswith(b"HTTP/1.1 200"), "the slow event acknowledged"
        finally:
            writer.close()
        assert {status for status, _ in statuses} == {200}, statuses
        early = [at for at in asked() if at < min(released, first + 1.0)]
        assert early == [], f"{len(early)} users.info call(s) while the burst's receipts were being received"
        await eventually(lambda: {call.args.get("user") for call in slack.calls_of("users.info")} >= set(users),
                         "every first-time sender's name asked, after the burst")
        await eventually(lambda: len([q for q, n in answered(slack).items() if q not in ("Q001", "Q002")]) == COUNT,
                         "every event answered")
        await eventually(lambda: answered(slack)["Q002"] == 1, "the slow event answered")
        assert set(answered(slack).values()) == {1}, answered(slack)

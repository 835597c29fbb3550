"""Killed at any moment, with replicas: 3 real ``sabha run`` on one PostgreSQL behind a real nginx (Telegram
webhooks), 100 questions from 50 chats a round; one replica, checked to hold unanswered work in its leases, is
SIGKILLed while its replies wait in its send queue, while its reply requests are on the wire (the fake then
drops them: Telegram never got them), and anywhere; the others take its conversations over once its leases ran
out. Every question is answered, a second copy only marked as possibly repeated (tests/system/test_kill_anytime.py is
the single-process twin; harness: tests/support/replicas.py, tests/support/kill.py)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, ClientTimeout

from tests.support.daemon import markers
from tests.support.fakes.echo_model import EchoModel
from tests.support.kill import HoldingTelegramAPI, answered_count, copies, typing_at_once, verdict, wait_for
from tests.support.pg import PgServer, fresh_database, throwaway_cluster
from tests.support.replicas import TG_BASE, Burst, Nginx, Replicas, nginx_available
from tests.support.telegram import TOKEN

pytestmark = [pytest.mark.xdist_group("bursts"),
              pytest.mark.skipif(not nginx_available(), reason="needs Debian's nginx and runuser")]

CHATS = 50
PER = 2
BURST = CHATS * PER
CAP = 4  # inbox.max_concurrent_turns of each replica (its Telegram pool: 2 * CAP + 8 connections)
CLOSING = 900
VICTIM = "r1"
_Q = re.compile(r"\b(Q\d{3})\b")
UNFINISHED = "('received', 'replied', 'sending')"


@pytest.fixture
def cluster() -> Iterator[PgServer]:
    with throwaway_cluster() as server:
        yield server


@pytest.fixture
async def state_db(cluster: PgServer) -> AsyncIterator[str]:
    async with fresh_database(cluster) as url:
        yield url


@pytest.fixture
async def telegram() -> AsyncIterator[HoldingTelegramAPI]:
    async with HoldingTelegramAPI(token=TOKEN) as server:
        yield server


async def rows(url: str, sql: str) -> list[Any]:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        return list(await conn.fetch(sql))
    finally:
        await conn.close()


def marker_of(envelope: str | None) -> str | None:
    found = _Q.search(envelope or "")
    return found.group(1) if found else None


async def victims_work(url: str, statuses: str = UNFINISHED) -> list[str]:
    """The questions of conversations the victim holds the lease of, in ``statuses``."""
    found = await rows(url, "SELECT m.envelope FROM inbound_messages m JOIN leases l ON l.key = 'lane:' || m.lane "
                            f"WHERE l.holder = '{VICTIM}' AND m.status IN {statuses}")
    return [m for r in found if (m := marker_of(r["envelope"]))]


async def started_to_leave(url: str) -> list[str]:
    """The questions whose reply had started to leave ("sending"), whichever replica sent it: a reply of the
    victim's whose lane lease had already gone idle is not in :func:`victims_work` (seen: 7 marked copies
    against 5 counted through the victim's leases)."""
    found = await rows(url, "SELECT envelope FROM inbound_messages WHERE status = 'sending'")
    return [m for r in found if (m := marker_of(r["envelope"]))]


async def settled(url: str, wanted: list[str]) -> bool:
    """Every question of ``wanted`` stored and final."""
    found = await rows(url, "SELECT envelope, status FROM inbound_messages")
    final = {m: r["status"] not in ("received", "replied", "sending") for r in found
             if (m := marker_of(r["envelope"])) in wanted}
    return len(final) == len(wanted) and all(final.values())


async def post(burst: Burst, telegram: HoldingTelegramAPI, first: int, count_per: int = PER) -> None:
    """Every chat's questions through nginx, each chat in order, each until acknowledged."""
    async with ClientSession(timeout=ClientTimeout(total=40)) as http:
        async def chat(c: int) -> None:
            for k in range(count_per):
                user = TG_BASE + c
                body = telegram.build_text_update(user, user, f"Q{first + k * CHATS + c:03d} what do you think?",
                                                  is_forum=False, chat_type="private")
                await burst.until_acknowledged(http, True, body)

        await asyncio.gather(*(chat(c) for c in range(CHATS)))


async def eventually(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 120.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.05)


async def send_queue(url: str, telegram: HoldingTelegramAPI, wanted: list[str]) -> Callable[[], None]:
    async def waiting() -> bool:  # the victim's stored replies that did not reach Telegram
        seen = copies(telegram)
        return len([m for m in await victims_work(url, "('replied', 'sending')") if m in wanted and m not in seen]) >= 2

    await eventually(waiting, f"2 replies of {VICTIM} waiting in its send queue")
    return lambda: telegram.release("sendChatAction")


async def on_the_wire(url: str, telegram: HoldingTelegramAPI, wanted: list[str]) -> Callable[[], None]:
    async def sending() -> bool:
        return bool([m for m in await victims_work(url, "('sending')") if m in wanted])

    telegram.hold("sendMessage")
    await eventually(sending, f"a reply of {VICTIM} on the wire")
    return lambda: telegram.release("sendMessage", post=False)


async def anywhere(url: str, telegram: HoldingTelegramAPI, wanted: list[str]) -> Callable[[], None]:
    await wait_for(lambda: answered_count(telegram, wanted) >= 40, "40 answers")
    return lambda: None


MOMENTS: dict[str, Callable[[str, HoldingTelegramAPI, list[str]], Awaitable[Callable[[], None]]]] = {
    "send queue": send_queue, "wire, not posted": on_the_wire, "anywhere": anywhere}


async def test_a_replica_killed_at_any_moment_leaves_nobody_unanswered(
        tmp_path: Path, state_db: str, telegram: HoldingTelegramAPI) -> None:
    report: list[str] = []
    async with EchoModel(latency=0.2) as model:
        replicas = Replicas(tmp_path, state_db, telegram, None, model, count=3, users=CHATS, lease_s=3,
                            extra=["inbox:", f"  max_concurrent_turns: {CAP}"])
        for proc in replicas.procs:
            typing_at_once(proc.config)
        nginx = Nginx(tmp_path / "nginx", replicas.ports)
        burst = Burst("", conversations=CHATS, per=PER, telegram_share=1.0)
        victim = replicas.procs[int(VICTIM[1:])]
        try:
            nginx.start()
            burst.url = nginx.url
            await replicas.start()
            for round_, (name, moment) in enumerate(MOMENTS.items()):
                first = round_ * BURST
                wanted = markers(BURST, first)
                if name == "send queue":  # typing indicators take every pooled connection
                    telegram.hold("sendChatAction")
                sending = asyncio.create_task(post(burst, telegram, first))
                try:
                    after_kill = await moment(state_db, telegram, wanted)
                    held = await victims_work(state_db)
                    assert held, f"{VICTIM} held no unanswered work when it was killed"
                    # requests held (any replica's) or started by the victim: the only ones to repeat. Counted
                    # just before the kill as well as after it: after, a killed request may have left the fake's
                    # count and the victim's lanes may be another replica's already (its leases last 3 s; seen
                    # on a busy machine: 7 marked copies against 5 counted after the kill)
                    before = telegram.waiting("sendMessage") + len(await started_to_leave(state_db))
                    replicas.kill(int(VICTIM[1:]))
                    await victim.wait(30)
                    on_wire = max(before, telegram.waiting("sendMessage")
                                  + len(await victims_work(state_db, "('sending')")))
                    after_kill()
                    await asyncio.wait_for(sending, 120)
                finally:
                    if not sending.done():
                        sending.cancel()
                await eventually(lambda w=wanted: settled(state_db, w), f"the round killed at '{name}' settled")  # type: ignore[misc]
                await post(burst, telegram, CLOSING, 1)  # nothing twice: one more question per chat, answered
                await wait_for(lambda: answered_count(telegram, markers(CHATS, CLOSING)) == CHATS, "the closing ones")
                seen = verdict(telegram, BURST, first)
                report.append(f"  {name:>17}  {len(held):>13}  {len(seen.lost):>4}  {len(seen.unmarked_twice):>14}"
                              f"  {seen.marked_only:>11}  {seen.marked_second:>13}")
                assert (seen.lost, seen.unmarked_twice) == ([], []), f"kill at '{name}'\n{replicas.logs()}"
                # A marked copy only for a request that had started to leave when the victim died. Unlike the one-
                # process test, the send-queue round cannot ask for none: the victim's pool is not all held, so a
                # few replies are on their way at the kill (seen: marked_second=3 with the early mark gone).
                if name != "anywhere":
                    assert seen.marked_only + seen.marked_second <= on_wire, f"kill at '{name}': {seen}, {on_wire} held"
                telegram.sent_messages[:] = [m for m in telegram.sent_messages if " Q9" not in m.text]  # CLOSING
                await victim.wait(30)
                await victim.start()  # back for the next round
        finally:
            nginx.stop()
            await replicas.close()
            print(f"\n3 replicas behind nginx, {VICTIM} SIGKILLed ({BURST} questions from {CHATS} chats a round):")
            print("         kill while  victim's work  lost  twice unmarked  marked only  marked second")
            print("\n".join(report))

"""The replica kill test: 3 real ``sabha run`` replicas on one PostgreSQL behind a real nginx, Telegram and
WhatsApp in webhook mode, 600 deliveries from 100 conversations. One replica is killed with SIGKILL mid-burst
(while its turns are at the model: not in the one window where a crash leaves "may have arrived", between
storing "sending" and the service's answer, as in tests/system/test_durability.py), or PostgreSQL is restarted
mid-burst; every delivery not acknowledged with 200 is delivered again, as Meta and Telegram do, and some
acknowledged ones too. Result: 0 lost, 0 answered twice, each conversation answered in the order it wrote.
And the Telegram polling leader killed mid-burst: the standby takes over, 0 lost, 0 twice.
(harness: tests/support/replicas.py)"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.support.daemon import SabhaProcess, answered, wait_answered
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.pg import PgServer, fresh_database, throwaway_cluster
from tests.support.replicas import TG_BASE, Burst, Nginx, Replicas, between_turns

# Three daemons and a burst: one after the other on one xdist worker, never two at once on a small machine.
pytestmark = pytest.mark.xdist_group("bursts")

CONVERSATIONS = 100
PER = 6


@pytest.fixture
def cluster() -> Iterator[PgServer]:
    """A PostgreSQL of this test alone (it is restarted in one of them)."""
    with throwaway_cluster() as server:
        yield server


@pytest.fixture
async def state_db(cluster: PgServer) -> AsyncIterator[str]:
    async with fresh_database(cluster) as url:
        yield url


@pytest.fixture
async def model() -> AsyncIterator[EchoModel]:
    async with EchoModel(latency=0.05) as server:
        yield server


async def unanswered_held_by(url: str, replica: str) -> int:
    """Unanswered messages in the conversations whose lease ``replica`` holds."""
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval(
            "SELECT count(*) FROM inbound_messages m JOIN leases l ON l.key = 'lane:' || m.lane "
            "WHERE l.holder = $1 AND m.status IN ('received', 'replied', 'sending')", replica))
    finally:
        await conn.close()


async def _holdings(url: str) -> str:
    """Who holds how many leases, and the messages by status: what the assertion shows when a kill would not."""
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        leases = await conn.fetch("SELECT holder, count(*) AS n FROM leases GROUP BY holder")
        statuses = await conn.fetch("SELECT status, count(*) AS n FROM inbound_messages GROUP BY status")
        return f"leases {dict((r['holder'], r['n']) for r in leases)}, " \
               f"messages {dict((r['status'], r['n']) for r in statuses)}"
    finally:
        await conn.close()


async def _wait_until_holding(url: str, replica: str, timeout: float = 120.0) -> int:
    """Wait, with the model held, until ``replica`` holds unanswered work: at a third of the burst it may
    hold none (on a busy machine the replicas store and acknowledge faster than they start the turns: seen
    with 600 stored and no lane taken yet); they go on claiming conversations, whose turns then wait at the
    held model, so it soon does. Returns what it holds (0 if it never did)."""
    deadline = time.monotonic() + timeout
    while True:
        held = await unanswered_held_by(url, replica)
        if held or time.monotonic() > deadline:
            return held
        await asyncio.sleep(0.05)


ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "replicas"


async def _burst_with(tmp_path: Path, state_url: str, telegram: FakeTelegramAPI, graph: FakeGraphAPI,
                      model: EchoModel, disrupt: str, cluster: PgServer) -> None:
    replicas = Replicas(tmp_path, state_url, telegram, graph, model, count=3, users=CONVERSATIONS,
                        lease_s=5, extra=["inbox:", "  storage_retry_s: 0.5"])
    nginx = Nginx(tmp_path / "nginx", replicas.ports)
    burst = Burst("", conversations=CONVERSATIONS, per=PER)
    try:
        nginx.start()
        burst.url = nginx.url
        await replicas.start()
        started = time.monotonic()
        sending = asyncio.create_task(burst.run(telegram))
        while burst.acknowledged < burst.total // 3 and not sending.done():  # noqa: ASYNC110 - a fake's counter
            await asyncio.sleep(0.01)
        assert not sending.done(), "the burst ended before a third was acknowledged; not mid-burst"
        if disrupt == "kill":
            await between_turns(model, lambda: burst.answered_count(telegram, graph))
            held = await _wait_until_holding(state_url, "r1")
            assert held, f"r1 never held unanswered work while the model was held: the kill would prove nothing " \
                         f"({await _holdings(state_url)})"
            replicas.kill(1)
            model.release()
        else:
            await asyncio.to_thread(cluster.stop, "fast")  # every connection of every replica drops
            await asyncio.sleep(1.0)
            await asyncio.to_thread(cluster.start)
        await asyncio.wait_for(sending, 120)
        await burst.wait_finished(telegram, graph, state_url)  # however long a loaded machine takes
        finished = await _holdings(state_url)
        await asyncio.sleep(1.0)  # anything answered twice would have gone out by now
        took = time.monotonic() - started
    finally:
        nginx.stop()
        await replicas.close()
    lost, twice, disordered = burst.tally(telegram, graph)
    if lost or twice or disordered:
        saved = replicas.save_logs(ARTIFACTS / f"{disrupt.replace(' ', '-')}-{int(time.time())}")
        print(f"replica logs: {saved}")
    print(f"\n3 replicas behind nginx, {disrupt} mid-burst: {burst.total} messages in {CONVERSATIONS} conversations, "
          f"{burst.posted} posts ({burst.acknowledged} acknowledged, refused {dict(burst.refused)}), "
          f"{len(burst.again)} redelivered after acknowledgement; lost {len(lost)}, twice {len(twice)}, "
          f"out of order {len(disordered)}; {took:.1f} s")
    stories = "\n".join(burst.story(marker, replicas.by_port()) for marker in [*lost, *twice][:6])
    assert (lost, twice, disordered) == ([], [], []), f"lost {lost[:20]} twice {twice[:20]} ({finished})\n" \
                                                      f"{stories}\n{replicas.logs()}" \
                                                      f"\n{nginx.errors()[-3000:]}"


async def test_a_replica_killed_mid_burst_loses_nothing_and_answers_nothing_twice(
        tmp_path: Path, state_db: str, fake: FakeTelegramAPI, fake_graph: FakeGraphAPI, model: EchoModel,
        cluster: PgServer) -> None:
    await _burst_with(tmp_path, state_db, fake, fake_graph, model, "kill", cluster)


async def test_postgres_restarted_mid_burst_loses_nothing(
        tmp_path: Path, state_db: str, fake: FakeTelegramAPI, fake_graph: FakeGraphAPI, model: EchoModel,
        cluster: PgServer) -> None:
    await _burst_with(tmp_path, state_db, fake, fake_graph, model, "postgres restart", cluster)


async def test_the_polling_leader_killed_mid_burst_a_standby_takes_over(
        tmp_path: Path, state_db: str, fake: FakeTelegramAPI, model: EchoModel) -> None:
    replicas = Replicas(tmp_path, state_db, fake, None, model, count=2, users=10, mode="polling", lease_s=2)
    count = 60
    try:
        first = replicas.procs[0]
        await first.start()
        await first.wait_for_log("leads Telegram polling", timeout=20)
        standby = replicas.procs[1]
        await standby.start()
        await standby.wait_for_log("standing by; another replica polls", timeout=20)
        for i in range(count):  # ten conversations, six messages each, queued in the fake as Telegram holds them
            user = TG_BASE + i % 10
            fake.push_update(fake.build_text_update(user, user, f"Q{i:03d} what do you think?", is_forum=False,
                                                    chat_type="private"))
            if i == count // 2:
                await wait_answered(fake, count, at_least=10, timeout=30)
                await between_turns(model, lambda: len(answered(fake)))
                replicas.kill(0)  # the leader, mid-burst
                model.release()
            await asyncio.sleep(0.01)
        await standby.wait_for_log("leads Telegram polling", timeout=20)
        marker = count
        fake.push_update(fake.build_text_update(TG_BASE, TG_BASE, f"Q{marker:03d} marker", is_forum=False,
                                                chat_type="private"))
        await wait_answered(fake, count + 1, timeout=60)
        await asyncio.sleep(1.0)
    except BaseException:
        print(f"replica logs: {replicas.save_logs(ARTIFACTS / f'polling-leader-{int(time.time())}')}")
        raise
    finally:
        await replicas.close()
    seen = answered(fake)
    lost = [f"Q{i:03d}" for i in range(count + 1) if seen[f"Q{i:03d}"] == 0]
    twice = [f"Q{i:03d}" for i in range(count + 1) if seen[f"Q{i:03d}"] > 1]
    print(f"\npolling leader killed mid-burst: lost {len(lost)}, twice {len(twice)}")
    assert (lost, twice) == ([], []), replicas.logs()


async def test_two_replicas_with_one_name_the_second_refuses(tmp_path: Path, state_db: str, fake: FakeTelegramAPI,
                                                             model: EchoModel) -> None:
    replicas = Replicas(tmp_path, state_db, fake, None, model, count=2, users=2, mode="webhook")
    for proc in replicas.procs:
        text = proc.config.read_text(encoding="utf-8")
        proc.config.write_text(text.replace('name: "r1"', 'name: "r0"'), encoding="utf-8")
    try:
        await replicas.procs[0].start()
        second: SabhaProcess = replicas.procs[1]
        with contextlib.suppress(AssertionError):
            await second.start()
        code = await second.wait(30)
        assert code == 2, second.log
        assert "another replica named 'r0' is running on this state" in second.log
        assert second.port is None  # refused before it took a port
    finally:
        await replicas.close()

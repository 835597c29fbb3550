"""Leases under load, through real ``sabha run`` replicas on a real PostgreSQL: a replica whose connection pool is
held busy keeps renewing its conversations' leases (renewal has a connection of its own), and a turn whose lease
was lost meanwhile stops at once instead of asking the model for an answer that the fence will drop.

Seen beside the full suite and two CPU burners, PostgreSQL restarted mid-burst (tests/system/test_replicas_kill.py):
renewals waited for a pooled connection behind the turns' statements, leases expired, the other replicas took the
conversations and answered them again, and each replica's late answers were dropped at the fence: 120 of 600
messages were still unanswered when the test stopped waiting. Here the starvation is made deterministic: the pool
is 2 connections and a lock taken from outside holds the turns' statements (and so the pool) for longer than a
lease. (harness: tests/support/replicas.py)"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.replicas import Burst, Replicas

pytestmark = pytest.mark.xdist_group("bursts")

LEASE_S = 3.0
CONVERSATIONS = 4
WAITS_S = 120.0  # what only a hung replica reaches: every wait below is for an event


@pytest.fixture
async def model() -> AsyncIterator[EchoModel]:
    async with EchoModel(latency=0.01) as server:
        yield server


async def _until(what: str, check: Any) -> Any:
    """``await check()`` until it is truthy (an event in the daemons or the database); its value."""
    deadline = time.monotonic() + WAITS_S
    while True:
        value = await check()
        if value:
            return value
        assert time.monotonic() < deadline, f"never happened: {what}"
        await asyncio.sleep(0.05)


def _small_pool(replicas: Replicas, size: int) -> None:
    for proc in replicas.procs:
        text = proc.config.read_text(encoding="utf-8")
        proc.config.write_text(text.replace("pool_size: 8", f"pool_size: {size}"), encoding="utf-8")


async def test_a_replica_whose_pool_is_held_busy_longer_than_a_lease_keeps_its_conversations(
        tmp_path: Path, pg_url: str, fake: FakeTelegramAPI, model: EchoModel) -> None:
    import asyncpg

    replicas = Replicas(tmp_path, pg_url, fake, None, model, count=2, users=CONVERSATIONS, lease_s=LEASE_S)
    _small_pool(replicas, 2)
    burst = Burst("", conversations=CONVERSATIONS, per=1, telegram_share=1.0)
    watch = await asyncpg.connect(pg_url)
    locker = await asyncpg.connect(pg_url)
    try:
        await replicas.procs[0].start()
        burst.url = f"http://127.0.0.1:{replicas.ports[0]}"  # every message taken in by r0
        model.hold()
        await burst.run(fake)

        async def at_the_model() -> bool:
            return model.in_flight == CONVERSATIONS

        await _until("every question at the model", at_the_model)
        holders = {r["holder"]: r["n"] for r in await watch.fetch(
            "SELECT holder, count(*) AS n FROM leases GROUP BY holder")}
        assert holders == {"r0": CONVERSATIONS}, holders
        await replicas.procs[1].start()  # now, so that it cannot take a conversation before r0 (a loaded machine)

        # A slow store: every write to the messages waits, and with it each statement of r0's turns and both of
        # its pooled connections.
        tx = locker.transaction()
        await tx.start()
        await locker.execute("LOCK TABLE inbound_messages IN SHARE MODE")
        expiry = float(await watch.fetchval("SELECT max(expires_at) FROM leases WHERE holder = 'r0'"))
        model.release()

        async def pool_held() -> bool:
            waiting = await watch.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND application_name = 'sabha' AND wait_event_type = 'Lock'")
            return int(waiting) >= 2

        await _until("r0's two pooled connections waiting for the lock", pool_held)

        async def decided() -> str:
            """Once the leases as they were at the lock have run out: r1 took one (r0's renewal starved), or
            every one of r0's was renewed since (held on)."""
            rows = await watch.fetch("SELECT holder, expires_at FROM leases")
            if any(r["holder"] != "r0" for r in rows):
                return "taken"
            if time.time() > expiry + LEASE_S / 3 and all(float(r["expires_at"]) > expiry for r in rows):
                return "renewed"
            return ""

        outcome = await _until("the leases renewed or taken", decided)
        await tx.commit()

        async def all_answered() -> bool:
            return burst.answered_count(fake, None) == CONVERSATIONS

        await _until("every question answered", all_answered)
        await asyncio.sleep(1.0)  # anything answered twice would have gone out by now
    finally:
        await locker.close()
        await watch.close()
        await replicas.close()
    lost, twice, _ = burst.tally(fake, None)
    log = "\n".join(replicas.procs[0].lines)
    assert outcome == "renewed", f"r1 took r0's conversations while r0's pool was busy: r0's renewal starved " \
                                 f"(the model was asked {model.calls} times for {CONVERSATIONS} questions)\n" \
                                 f"{replicas.logs()}"
    assert (lost, twice) == ([], [])
    assert model.calls == CONVERSATIONS, f"the model was asked {model.calls} times for {CONVERSATIONS} questions"
    assert "lost" not in log or "lease(s) to another replica" not in log


async def test_a_turn_whose_lease_was_taken_while_its_replica_was_frozen_stops_at_once(
        tmp_path: Path, pg_url: str, fake: FakeTelegramAPI, model: EchoModel) -> None:
    """r0 is frozen (SIGSTOP: a stalled machine) while its turn waits at the model; its lease runs out and r1 takes
    the conversation and asks the model itself. When r0 comes back, its heartbeat finds the lease gone: its turn
    is stopped there and then (its request to the model is dropped), not run to the end for an answer the fence
    drops. The question is answered once, by r1."""
    import asyncpg

    replicas = Replicas(tmp_path, pg_url, fake, None, model, count=2, users=1, lease_s=LEASE_S)
    burst = Burst("", conversations=1, per=1, telegram_share=1.0)
    watch = await asyncpg.connect(pg_url)
    r0 = replicas.procs[0]
    try:
        await r0.start()
        burst.url = f"http://127.0.0.1:{replicas.ports[0]}"
        model.hold()
        await burst.run(fake)

        def asked(n: int) -> Any:
            async def check() -> bool:
                return model.in_flight == n
            return check

        await _until("r0's turn at the model", asked(1))
        await replicas.procs[1].start()  # now, so that it cannot take the conversation before r0 (a loaded machine)
        assert r0.proc is not None
        r0.proc.send_signal(signal.SIGSTOP)
        try:
            async def taken() -> bool:
                return await watch.fetchval("SELECT holder FROM leases") == "r1"

            await _until("r1 took the conversation", taken)
            await _until("r1's turn at the model too", asked(2))
        finally:
            r0.proc.send_signal(signal.SIGCONT)
        await r0.wait_for_log(r"lost 1 lease\(s\) to another replica")
        await r0.wait_for_log(r"lost conversation \S+ to another replica; stopping its turn here", timeout=30)

        async def dropped() -> bool:
            return model.abandoned == 1

        await _until("r0's request to the model dropped", dropped)
        model.release()

        async def answered() -> bool:
            return burst.answered_count(fake, None) == 1

        await _until("the question answered", answered)
        await asyncio.sleep(1.0)  # anything answered twice would have gone out by now
    finally:
        model.release()
        await watch.close()
        await replicas.close()
    lost, twice, _ = burst.tally(fake, None)
    assert (lost, twice) == ([], [])
    assert "not going to store its answer" not in r0.log, "r0 ran its turn to the end and the fence dropped it"

"""A standing item's run with replicas (issue 42, "Must show"): 3 real ``sabha run`` on one PostgreSQL behind a
real nginx, their time read from one file the test writes (``SABHA_TEST_CLOCK``). The board has a history
(``sabha demo``), so the brief has something new and asks the model, which the test holds: the replica that
claimed the run is then inside it, its row claimed and nothing sent. That replica is SIGKILLed; once its
claim's lease runs out (the test moves the clock on) another replica takes the run back and does it. The
brief reaches the chat exactly once, and the next run is scheduled exactly once (harness:
tests/support/replicas.py)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from board.clock import FileClock
from tests.support.ci import missing_part
from tests.support.daemon import DAEMON_REPO
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.pg import PgServer, fresh_database, throwaway_cluster
from tests.support.replicas import TG_BASE, Nginx, Replicas, nginx_available
from tests.support.schedule import START

pytestmark = [pytest.mark.xdist_group("bursts")]

CHAT = str(TG_BASE)  # the first allowed Telegram user's private chat
WAIT = 120.0  # a bound for a hung replica, not a measure of speed


@pytest.fixture
def cluster() -> Iterator[PgServer]:
    with throwaway_cluster() as server:
        yield server


@pytest.fixture
async def state_db(cluster: PgServer) -> AsyncIterator[str]:
    async with fresh_database(cluster) as url:
        yield url


@pytest.fixture
async def model() -> AsyncIterator[EchoModel]:
    async with EchoModel(latency=0.01) as server:
        yield server


async def rows(url: str, sql: str) -> list[Any]:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        return list(await conn.fetch(sql))
    finally:
        await conn.close()


async def cli(config: Path, env: dict[str, str], *argv: str) -> str:
    """The real ``sabha <argv>`` on a replica's config; its output (it must succeed)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from bot.cli import main; raise SystemExit(main.main())", *argv, "--config",
        str(config), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}, **env,
             "PYTHONPATH": str(DAEMON_REPO)}, cwd=str(config.parent))
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), WAIT)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, out.decode(errors="replace")
    return out.decode(errors="replace")


async def claimer(replicas: Replicas, timeout: float = WAIT) -> int:
    """The replica whose log says it claimed the run."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = [n for n, p in enumerate(replicas.procs) if any("standing: #1 run due" in line for line in p.lines)]
        if found:
            assert len(found) == 1, replicas.logs()
            return found[0]
        assert asyncio.get_running_loop().time() < deadline, f"no replica claimed the run\n{replicas.logs()}"
        await asyncio.sleep(0.05)


async def test_the_replica_that_claimed_a_standing_run_killed_another_does_it_once(
        tmp_path: Path, state_db: str, fake: FakeTelegramAPI, model: EchoModel) -> None:
    if not nginx_available():
        missing_part("Debian's nginx (apt-get install nginx) and runuser")
    clock = tmp_path / "clock"
    FileClock.write(clock, START)
    replicas = Replicas(tmp_path, state_db, fake, None, model, count=3, users=4, lease_s=2)
    timed = {"SABHA_TEST_MODE": "1", "SABHA_TEST_CLOCK": str(clock)}
    for proc in replicas.procs:
        proc.env.update(timed)
    nginx = Nginx(tmp_path / "nginx", replicas.ports)
    try:
        nginx.start()
        await replicas.start()
        config, env = replicas.procs[0].config, {**replicas.procs[0].env}
        await cli(config, env, "demo")  # a history: the brief has something new, so it asks the model
        added = await cli(config, env, "schedule", "add", "day 10am brief", "--channel", "telegram", "--chat", CHAT)
        assert "First run Wed 2026-11-25 10:00 UTC" in added
        model.hold()
        FileClock.write(clock, START + timedelta(hours=1))
        victim = await claimer(replicas)
        claimed = await rows(state_db, "SELECT status FROM scheduled_work WHERE kind = 'standing' "
                                       "AND key LIKE 'standing:1:2026-11-25%'")
        assert [r["status"] for r in claimed] == ["claimed"]  # inside the run, nothing sent
        replicas.kill(victim)
        model.release()
        # the claim is the victim's until it is untouched for replicas.lease_s (2 s) on the board's clock: move it
        # on; a live runner takes the run back at its next look at the table (state.schedule_recheck_s at most)
        FileClock.write(clock, START + timedelta(hours=1, seconds=10))

        def briefs() -> list[str]:
            return [m.text for m in fake.sent_messages if m.chat_id == int(CHAT) and "Brief: what changed" in m.text]

        try:
            await fake.wait_until(lambda: bool(briefs()), "the brief", WAIT)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{replicas.logs()}") from None
        deadline = asyncio.get_running_loop().time() + WAIT
        while (await rows(state_db, "SELECT status FROM scheduled_work WHERE key LIKE 'standing:1:2026-11-25%'")
               )[0]["status"] != "done":
            assert asyncio.get_running_loop().time() < deadline, replicas.logs()
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)  # a second copy would have gone out by now
        assert len(briefs()) == 1, (briefs(), replicas.logs())
        runs = await rows(state_db, "SELECT key, status FROM scheduled_work WHERE kind = 'standing' ORDER BY due_at")
        assert [r["status"] for r in runs] == ["done", "pending"], [tuple(r) for r in runs]
        assert runs[1]["key"] == "standing:1:2026-11-26T10:00:00.000000Z"
        others = [p for n, p in enumerate(replicas.procs) if n != victim]
        assert any("standing: #1 run due" in line for p in others for line in p.lines), replicas.logs()
    finally:
        nginx.stop()
        await replicas.close()

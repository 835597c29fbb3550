"""Start-up that survives its state store (issue item 2): a real ``sabha run`` on a PostgreSQL that is
not up yet waits for it (not ready meanwhile: /readyz 503, systemd ``STATUS=`` says why), then starts
and answers once the server comes up; a store that restarting cannot fix (no such database) ends the
start at once with exit code 2 and one line.

The PostgreSQL is a real throwaway cluster (tests/support/pg.py) made first, stopped, and started
again on the same port only after ``sabha run`` has said it waits for it.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from tests.support.daemon import DAEMON_REPO, SabhaProcess, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.ops import NotifyListener, get_json
from tests.support.pg import PgServer, throwaway_cluster
from tests.support.process import register
from tests.support.telegram import OWNER, TOKEN, eventually

WAIT = 90.0  # a step on a loaded machine (a start, a migration of every table)


class Waiting(SabhaProcess):
    """A ``sabha run`` whose start is not awaited to the end: it may be waiting for its state store."""

    async def launch(self) -> Waiting:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
        env.update(self.env, PYTHONPATH=str(DAEMON_REPO), PYTHONUNBUFFERED="1")
        self.lines.clear()
        self.port = None
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from bot.cli import main; raise SystemExit(main.main())", "run", "--config",
            str(self.config), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=env,
            cwd=str(self.config.parent))
        register(self)
        self._reader = asyncio.create_task(self._read())
        return self


async def sabha_cli(config: Path, *args: str) -> tuple[int, str]:
    """``sabha *args --config config`` of this checkout, to its exit; (exit code, stdout + stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(DAEMON_REPO), PYTHONUNBUFFERED="1", TELEGRAM_BOT_TOKEN=TOKEN)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *args, "--config", str(config), env=env, cwd=str(config.parent),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), WAIT)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, out.decode(errors="replace")


def on_postgres(tmp_path: Path, fake: FakeTelegramAPI, model: EchoModel | None, url: str) -> Path:
    return write_config(tmp_path, fake, model, extra=["state:", f"  url: {url}"])


async def test_postgres_down_at_start_is_waited_for_then_the_daemon_runs(
        tmp_path: Path, fake: FakeTelegramAPI, echo_model: EchoModel) -> None:
    with throwaway_cluster() as server:
        server.stop()  # nothing listens on its port when Sabha starts
        config = on_postgres(tmp_path, fake, echo_model, server.url())
        async with NotifyListener() as systemd:
            sabha = Waiting(config, env={"TELEGRAM_BOT_TOKEN": TOKEN, **systemd.env})
            try:
                await sabha.launch()
                await sabha.wait_for_log(r"cannot reach the state store yet \(try 2\)", timeout=WAIT)
                assert "Traceback" not in sabha.log
                assert sabha.proc is not None and sabha.proc.returncode is None  # waiting, not exited
                assert sabha.port is not None, sabha.log
                status, health = await get_json(sabha.port, "/healthz")
                assert status == 200 and health["status"] == "starting", health
                status, ready = await get_json(sabha.port, "/readyz")
                assert status == 503 and "state store unreachable" in ready["reasons"][0], ready
                assert "PostgreSQL at 127.0.0.1" in ready["reasons"][0], ready
                said = await systemd.wait_for("STATUS=not ready: waiting for the state store")
                assert "PostgreSQL" in said
                assert any(line.startswith("EXTEND_TIMEOUT_USEC=") for line in systemd.lines)
                assert not any(line == "READY=1" for line in systemd.lines)

                await asyncio.to_thread(server.start)
                await sabha.wait_for_log(r"state store reached after \d+ tries", timeout=WAIT)
                await sabha.wait_for_log(r"sabha \S+ running", timeout=WAIT)
                await systemd.wait_for("READY=1", timeout=WAIT)
                fake.push_text(OWNER, OWNER, "Q001 are you there?")
                await eventually(lambda: any("ECHO Q001" in m.text for m in fake.sent_to(OWNER)), "the answer",
                                 timeout=WAIT)
                await _ready(sabha.port)
                assert await sabha.signal(signal.SIGTERM) == 0
            finally:
                await sabha.close()


async def _ready(port: int) -> None:
    for _ in range(600):
        status, body = await get_json(port, "/readyz")
        if status == 200:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"never ready: {body}")


async def test_a_stop_while_waiting_for_postgres_exits_cleanly(tmp_path: Path, fake: FakeTelegramAPI) -> None:
    with throwaway_cluster() as server:
        server.stop()
        sabha = Waiting(on_postgres(tmp_path, fake, None, server.url()))
        try:
            await sabha.launch()
            await sabha.wait_for_log(r"cannot reach the state store yet", timeout=WAIT)
            assert await sabha.signal(signal.SIGTERM) == 0
            assert "stopped while waiting for the state store" in sabha.log
        finally:
            await sabha.close()


async def test_a_polling_leader_on_postgres_ends_at_sigterm(tmp_path: Path, fake: FakeTelegramAPI,
                                                             echo_model: EchoModel, pg_url: str) -> None:
    """Stopping as the Telegram polling leader hung for good: letting go of the lock woke the heartbeat as it
    was cancelled, and Python 3.11's wait_for swallowed the cancel (systemd would kill it after TimeoutStopSec)."""
    sabha = Waiting(on_postgres(tmp_path, fake, echo_model, pg_url))
    try:
        await sabha.launch()
        await sabha.wait_for_log(r"sabha \S+ running", timeout=WAIT)
        await sabha.wait_for_log(r"leads Telegram polling", timeout=WAIT)
        fake.push_text(OWNER, OWNER, "Q001 are you there?")
        await eventually(lambda: any("ECHO Q001" in m.text for m in fake.sent_to(OWNER)), "the answer", timeout=WAIT)
        assert await sabha.signal(signal.SIGTERM) == 0
        assert "sabha stopped" in sabha.log
    finally:
        await sabha.close()


async def test_a_database_that_does_not_exist_ends_the_start_with_code_2(
        tmp_path: Path, fake: FakeTelegramAPI, pg_server: PgServer) -> None:
    sabha = Waiting(on_postgres(tmp_path, fake, None, pg_server.url("no_such_database")))
    try:
        await sabha.launch()
        assert await sabha.wait(WAIT) == 2
        assert "has no database 'no_such_database'" in sabha.log and "createdb" in sabha.log
        assert "Traceback" not in sabha.log and "cannot reach the state store" not in sabha.log
    finally:
        await sabha.close()


async def test_status_while_the_daemon_waits_for_postgres_says_it_runs_and_waits(
        tmp_path: Path, fake: FakeTelegramAPI, echo_model: EchoModel) -> None:
    """`sabha status` said "not running (no daemon.json there)", exit 3, while `sabha run` waited for its store."""
    with throwaway_cluster() as server:
        server.stop()
        config = on_postgres(tmp_path, fake, echo_model, server.url())
        sabha = Waiting(config, env={"TELEGRAM_BOT_TOKEN": TOKEN})
        try:
            await sabha.launch()
            await sabha.wait_for_log(r"cannot reach the state store yet \(try 2\)", timeout=WAIT)
            assert sabha.proc is not None
            code, out = await sabha_cli(config, "status")
            assert code == 1, out
            assert f"pid {sabha.proc.pid}" in out and "running" in out and "not running" not in out, out
            assert "starting: waiting for the state store" in out and "PostgreSQL at 127.0.0.1" in out, out
            assert "try " in out and "next try" in out, out
            code, out = await sabha_cli(config, "status", "--json")
            assert code == 1, out
            report = json.loads(out)
            daemon = report["daemon"]
            assert daemon["pid"] == sabha.proc.pid and daemon["alive"] and daemon["phase"] == "starting", daemon
            assert report["waiting_for"]["what"] == "the state store", report
            assert report["waiting_for"]["try"] >= 2 and report["waiting_for"]["next_try_at"], report
            assert "state store unreachable" in report["waiting_for"]["problem"], report
            code, out = await sabha_cli(config, "doctor", "--offline")  # agrees: the state server is not reachable
            where = f"127.0.0.1:{server.port}"
            assert code == 1 and any("FAIL" in line and where in line for line in out.splitlines()), out

            await asyncio.to_thread(server.start)
            await sabha.wait_for_log(r"sabha \S+ running", timeout=WAIT)
            assert sabha.port is not None
            await _ready(sabha.port)
            code, out = await sabha_cli(config, "status")
            assert code == 0, out
            assert "starting" not in out.splitlines()[0] and "ready: yes" in out, out
            assert await sabha.signal(signal.SIGTERM) == 0
            assert not (tmp_path / "sessions" / "daemon.json").exists()
        finally:
            await sabha.close()


async def test_a_stop_while_waiting_leaves_no_file_that_says_starting_and_a_kill_is_seen_through(
        tmp_path: Path, fake: FakeTelegramAPI) -> None:
    with throwaway_cluster() as server:
        server.stop()
        config = on_postgres(tmp_path, fake, None, server.url())
        sabha = Waiting(config)
        try:
            await sabha.launch()
            await sabha.wait_for_log(r"cannot reach the state store yet", timeout=WAIT)
            code, out = await sabha_cli(config, "status")
            assert code == 1 and "waiting for the state store" in out, out
            assert await sabha.signal(signal.SIGTERM) == 0
            code, out = await sabha_cli(config, "status")
            assert code == 3 and "no daemon.json there" in out, out

            await sabha.launch()  # killed while waiting: its file names a pid that no longer runs
            await sabha.wait_for_log(r"cannot reach the state store yet", timeout=WAIT)
            assert sabha.proc is not None
            pid = sabha.proc.pid
            assert await sabha.signal(signal.SIGKILL) == -signal.SIGKILL
            code, out = await sabha_cli(config, "status")
            assert code == 3 and f"names pid {pid}, which does not run" in out, out
        finally:
            await sabha.close()

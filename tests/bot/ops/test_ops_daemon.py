"""The daemon in production, in process: systemd notify messages on a socket the test
binds, /readyz (503 with reasons when the db cannot be written or a channel is down, 200
after recovery), /metrics parsed with prometheus_client after real traffic (PTB against
the fake Bot API, the echo model), and daemon.json for ``sabha status``."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.daemon import Daemon
from bot.ops.runtime import RUNTIME_FILE, read_runtime
from tests.support.daemon import fill_the_db
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.ops import NotifyListener, get_json, scrape, total
from tests.support.telegram import OWNER, eventually


@pytest.fixture
def start_daemon(daemon_for: Any) -> Any:
    """``daemon_for`` with the echo model priced, so cost is counted."""

    async def start(model: EchoModel | None = None, **options: Any) -> Daemon:
        started: Daemon = await daemon_for(model, price=model is not None, **options)
        return started

    return start


async def soon(predicate: Callable[[], object], what: str, timeout: float = 15.0) -> None:
    """``eventually`` with room for a loaded machine."""
    await eventually(predicate, what, timeout=timeout)


def dm(fake: FakeTelegramAPI, text: str) -> dict[str, Any]:
    return fake.push_text(OWNER, OWNER, text, is_forum=False, chat_type="private")


async def test_notify_ready_status_watchdog_stopping_on_a_bound_socket(
    start_daemon: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with NotifyListener(abstract=False) as systemd:
        monkeypatch.setenv("NOTIFY_SOCKET", systemd.name)
        monkeypatch.setenv("WATCHDOG_USEC", "200000")  # ping every 0.1 s
        monkeypatch.delenv("WATCHDOG_PID", raising=False)
        daemon = await start_daemon()
        await systemd.wait_for("READY=1")
        ready = systemd.datagrams.index(next(d for d in systemd.datagrams if "READY=1" in d))
        status = next(line for line in systemd.datagrams[ready] if line.startswith("STATUS="))
        assert "channels: telegram running" in status and "pending inbox 0" in status
        watchdog_before = systemd.lines.count("WATCHDOG=1")
        await soon(lambda: systemd.lines.count("WATCHDOG=1") >= watchdog_before + 3,
                         "the event loop to keep pinging the watchdog")
        between = await _while_the_loop_is_stuck(systemd, seconds=2.0)
        assert "WATCHDOG=1" not in between, between  # ~20 pings were due: a stuck loop must not ping
        resumed = systemd.lines.index("STATUS=test: the loop runs again")
        await soon(lambda: "WATCHDOG=1" in systemd.lines[resumed:], "the pings to resume with the loop")
        daemon.request_stop()
        await systemd.wait_for("STOPPING=1")
        await soon(lambda: daemon.phase == "stopping" and daemon.runtime_file is None, "the daemon to stop")
        keys = {line.split("=", 1)[0] for line in systemd.lines}
        assert keys == {"READY", "STATUS", "WATCHDOG", "STOPPING"}, systemd.datagrams


async def _while_the_loop_is_stuck(systemd: NotifyListener, seconds: float) -> list[str]:
    """Block this event loop (the daemon's too: it runs in process) for ``seconds``, as a handler stuck in
    blocking work would, between two marker datagrams sent to the notify socket; the lines that arrived between
    them. The socket keeps the order, so whatever the daemon sent while stuck (nothing, if its pings come from
    the loop) lies between the markers however slowly the listener reads them afterwards."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
        sender.sendto(b"STATUS=test: the loop is stuck", systemd.name)
        time.sleep(seconds)  # noqa: ASYNC251 - on purpose: the loop is stuck
        sender.setblocking(False)  # the socket's queue is short (net.unix.max_dgram_qlen): never wait on it
        try:
            sender.sendto(b"STATUS=test: the loop runs again", systemd.name)
        except BlockingIOError:
            raise AssertionError("the notify socket's queue filled up while the loop was stuck: the daemon kept "
                                 "sending (pings that do not come from the loop)") from None
    await systemd.wait_for("STATUS=test: the loop runs again")
    lines = systemd.lines
    return lines[lines.index("STATUS=test: the loop is stuck") + 1:lines.index("STATUS=test: the loop runs again")]


async def test_notify_to_an_abstract_socket_and_no_socket_at_all(
    start_daemon: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with NotifyListener(abstract=True) as systemd:
        monkeypatch.setenv("NOTIFY_SOCKET", systemd.name)
        monkeypatch.delenv("WATCHDOG_USEC", raising=False)
        await start_daemon()
        await systemd.wait_for("READY=1")
        assert "WATCHDOG=1" not in systemd.lines  # WatchdogSec= not set: no pings
    monkeypatch.setenv("NOTIFY_SOCKET", "@sabha-test-nobody-listens-here")
    monkeypatch.setenv("WATCHDOG_USEC", "100000")
    daemon = await start_daemon()  # a socket nobody binds: started anyway, nothing raised
    assert daemon.phase == "running" and daemon.notifier.failed >= 1


async def test_runtime_file_written_while_running_and_removed_at_a_clean_exit(
    start_daemon: Any, tmp_path: Path
) -> None:
    daemon = await start_daemon()
    path = tmp_path / "sessions" / RUNTIME_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data) == {"pid", "host", "port", "started_at", "version", "phase"} and data["phase"] == "running"
    assert data["pid"] == os.getpid() and data["port"] == daemon.port and data["host"] == "127.0.0.1"
    assert data["started_at"].endswith("+00:00")
    info = read_runtime(tmp_path / "sessions")
    assert info is not None and info.alive()
    daemon.request_stop()
    await soon(lambda: not path.exists(), "daemon.json to be removed")


async def test_readyz_is_503_while_the_db_is_full_and_200_after(
    start_daemon: Any, fake: FakeTelegramAPI
) -> None:
    async with EchoModel(latency=0.0) as model:
        daemon = await start_daemon(model)
        status, body = await get_json(daemon.port, "/readyz")
        assert status == 200 and body["ready"] is True and body["reasons"] == [], body
        await fill_the_db(daemon.board)
        dm(fake, "Q001 while the disk is full")

        async def not_ready() -> bool:
            return (await get_json(daemon.port, "/readyz"))[0] == 503

        await soon(not_ready, "/readyz to turn 503")
        status, body = await get_json(daemon.port, "/readyz")
        assert body["ready"] is False and body["checks"]["storage"]["ok"] is False
        assert any("state db not writable" in r and "full" in r for r in body["reasons"]), body
        health_status, health = await get_json(daemon.port, "/healthz")
        assert health_status == 200 and health["status"] == "ok"  # alive, just not ready

        await daemon.board.parts.db.pragma("max_page_count = 1073741823")  # space returns

        async def ready() -> bool:
            return (await get_json(daemon.port, "/readyz"))[0] == 200

        await soon(ready, "/readyz to turn 200 once the db can be written", timeout=20)
        await soon(lambda: any("Q001" in m.text and "ECHO" in m.text for m in fake.sent_messages),
                         "the stored message to be answered")


async def test_readyz_is_503_while_telegram_is_down_and_200_after(
    start_daemon: Any, fake: FakeTelegramAPI
) -> None:
    async with EchoModel(latency=0.0) as model:
        daemon = await start_daemon(model)
        fake.fail_next("getUpdates", 502, times=1)
        dm(fake, "Q001 the poll in flight returns this; the next poll fails")

        async def down() -> bool:
            status, body = await get_json(daemon.port, "/readyz")
            return status == 503 and any(r.startswith("channel telegram") for r in body["reasons"])

        await soon(down, "/readyz to report telegram down")
        _, body = await get_json(daemon.port, "/readyz")
        assert body["checks"]["channels"]["telegram"]["ok"] is False
        assert "getUpdates failed" in body["checks"]["channels"]["telegram"]["problem"]
        dm(fake, "Q002 the retried poll returns this")

        async def up() -> bool:
            return (await get_json(daemon.port, "/readyz"))[0] == 200

        await soon(up, "/readyz to turn 200 once Telegram answers again", timeout=20)


async def test_metrics_after_real_traffic(start_daemon: Any, fake: FakeTelegramAPI) -> None:
    async with EchoModel(latency=0.0) as model:
        daemon = await start_daemon(model)
        for i in range(3):
            dm(fake, f"Q00{i} how are we doing?")
        await fake.wait_for_messages(3, timeout=20)
        await soon(lambda: sum(i.answered for i in daemon.hub.intakes) >= 3, "three deliveries recorded")
        fake.push_text(OWNER, 999_999, "a stranger", is_forum=False, chat_type="private")  # denied
        await soon(lambda: sum(i.denied for i in daemon.hub.intakes) >= 1, "the stranger to be denied")

        m = await scrape(daemon.port)
        assert total(m, "sabha_messages_received_total", channel="telegram") == 3
        assert total(m, "sabha_messages_sent_total", channel="telegram") == 3
        assert total(m, "sabha_messages_denied_total", channel="telegram") == 1
        assert total(m, "sabha_turns_total", channel="telegram", outcome="ok") == 3
        assert total(m, "sabha_turn_latency_seconds_count", channel="telegram") == 3
        assert total(m, "sabha_turn_latency_seconds_bucket", channel="telegram", le="+Inf") == 3
        assert total(m, "sabha_model_calls_total", outcome="ok") == 3
        assert total(m, "sabha_tokens_total", kind="output") == 9  # the echo model's 3 tokens per answer
        assert total(m, "sabha_tokens_total", kind="input") > 0
        assert total(m, "sabha_cost_usd_total") > 0
        assert total(m, "sabha_inbox_pending", channel="telegram") == 0
        assert total(m, "sabha_meetings_running") == 0
        assert "sabha_errors_total" in m and total(m, "sabha_errors_total") == 0
        assert "sabha_soul_reloads_total" not in m or total(m, "sabha_soul_reloads_total") == 0

        soul = daemon.loaded.workspace / "board" / "finance.soul.md"
        soul.write_text(soul.read_text(encoding="utf-8") + "\nAlways mention runway.\n", encoding="utf-8")

        async def reloaded() -> bool:
            return total(await scrape(daemon.port), "sabha_soul_reloads_total", role="finance") >= 1

        await soon(reloaded, "the soul edit to be counted")
        soul.write_bytes(b"\xff\xfe not utf-8")

        async def broken() -> bool:
            return total(await scrape(daemon.port), "sabha_soul_load_errors_total", role="finance") >= 1

        await soon(broken, "the broken soul to be counted")


async def test_metrics_count_model_errors_and_degraded_turns(start_daemon: Any, fake: FakeTelegramAPI) -> None:
    async with EchoModel(latency=0.0) as model:
        daemon = await start_daemon(model)
    # The model's server is gone: every call fails, the graceful reply goes out.
    dm(fake, "Q001 anyone there?")
    await fake.wait_for_messages(1, timeout=20)
    m = await scrape(daemon.port)
    assert total(m, "sabha_turns_total", outcome="degraded") == 1
    assert total(m, "sabha_errors_total", kind="turn_degraded") == 1
    failed = {dict(k)["kind"]: v for k, v in m["sabha_errors_total"].items() if dict(k)["kind"].startswith("model_")}
    assert failed and all(v >= 1 for v in failed.values()), m["sabha_errors_total"]
    assert total(m, "sabha_model_calls_total") == sum(failed.values())


async def test_two_daemons_have_their_own_registries(start_daemon: Any, fake: FakeTelegramAPI) -> None:
    first = await start_daemon()
    second = Daemon(first.loaded, install_signals=False)
    assert second.metrics.registry is not first.metrics.registry
    from prometheus_client import REGISTRY

    assert REGISTRY.get_sample_value("sabha_turns_total") is None  # nothing on the global registry

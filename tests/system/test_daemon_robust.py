"""Issue 22, items 12-14, each through a real ``sabha run``: a data dir that cannot be written
at start (12), a full disk while messages arrive (13), and slow clients holding connections
open (14)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import ClientSession, ClientTimeout

from board.workspace.paths import copy_default_workspace
from tests.support.daemon import DAEMON_REPO, SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, post, text_notification

# -- 12. a data dir that cannot be written at start -------------------------------------------


def _plain_config(root: Path, data_dir: str = "./sessions") -> Path:
    """A sabha.yaml with no channel and the offline model: the daemon needs only its data dir."""
    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    path = root / "sabha.yaml"
    path.write_text(f"workspace: ./workspace\ndata_dir: {data_dir}\nserver:\n  host: 127.0.0.1\n  port: 0\n",
                    encoding="utf-8")
    return path


def _run_sabha(config: Path, *command: str, timeout: float = 30.0) -> tuple[int | None, str, float]:
    """``sabha run`` (or ``command``) as a subprocess: (exit code, None if it still ran after
    ``timeout``; stderr; seconds it took)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(DAEMON_REPO), PYTHONUNBUFFERED="1")
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", *(command or ("run",)), "--config", str(config)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=str(config.parent))
    try:
        _, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:  # the hang the issue saw
        proc.kill()
        _, err = proc.communicate()
        code = None
    return code, err.decode(errors="replace"), time.monotonic() - start


@contextlib.contextmanager
def _read_only(folder: Path) -> Iterator[str]:
    """Make ``folder`` impossible to write for this process: ``chattr +i`` for root (who
    ignores permission bits), mode 0555 for anyone else; yields which one."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield "chmod 0555"
        finally:
            folder.chmod(0o755)
        return
    made = subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make {folder} immutable here: {made.stderr.decode(errors='replace').strip()}")
    try:
        yield "chattr +i"
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def _first_run(root: Path) -> None:
    """Make the state db with every migration, as a first start leaves it on a real host."""
    from board.app import BOARD_MIGRATIONS, DB_FILE
    from board.db import StateDB
    from bot.app import all_migrations

    async def make() -> None:
        db = await StateDB.open(root / "sessions" / DB_FILE, [*BOARD_MIGRATIONS, *all_migrations()])
        await db.close()

    asyncio.run(make())


def _assert_one_clear_line(code: int | None, err: str, took: float, folder: Path) -> None:
    print(f"\nsabha run on an unwritable data dir: exit {code} after {took:.2f} s; stderr:\n{err}")
    assert code is not None, f"sabha run still ran after {took:.0f} s (the hang):\n{err}"
    assert "Traceback" not in err, err
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    [line] = [line for line in lines if line.startswith("sabha:")]
    assert str(folder) in line, line
    assert "write" in line and "data_dir" in line, line  # what is wrong, and what to do


@pytest.mark.parametrize("existing_db", [False, True], ids=["new", "with-db"])
def test_12_read_only_data_dir_at_start_is_one_clear_line_and_exit_2(tmp_path: Path, existing_db: bool) -> None:
    config = _plain_config(tmp_path)
    data = tmp_path / "sessions"
    data.mkdir()
    if existing_db:
        _first_run(tmp_path)
    with _read_only(data):
        code, err, took = _run_sabha(config)
    _assert_one_clear_line(code, err, took, data)


def test_12_other_commands_on_a_read_only_data_dir_say_the_same_line(tmp_path: Path) -> None:
    config = _plain_config(tmp_path)
    _first_run(tmp_path)
    with _read_only(tmp_path / "sessions"):
        code, err, took = _run_sabha(config, "ask", "hello")
    _assert_one_clear_line(code, err, took, tmp_path / "sessions")


def test_12_data_dir_under_a_regular_file_is_one_clear_line_and_exit_2(tmp_path: Path) -> None:
    config = _plain_config(tmp_path, "./afile/sessions")
    (tmp_path / "afile").write_text("not a folder\n", encoding="utf-8")
    code, err, took = _run_sabha(config)
    _assert_one_clear_line(code, err, took, tmp_path / "afile" / "sessions")


def test_12_read_only_state_db_at_start_is_one_clear_line_and_exit_2(tmp_path: Path) -> None:
    config = _plain_config(tmp_path)
    _first_run(tmp_path)
    with _read_only(tmp_path / "sessions" / "sabha.db"):
        code, err, took = _run_sabha(config)
    _assert_one_clear_line(code, err, took, tmp_path / "sessions")


# -- 13. a full disk while messages arrive ----------------------------------------------------

CANNOT_SAVE = "I can't save anything right now, please try again shortly."
SENDER_A = "15550003333"
SENDER_B = "15550004444"


def _whatsapp_config(root: Path, graph: FakeGraphAPI, model: EchoModel, server: list[str] | None = None) -> Path:
    """A sabha.yaml with only the WhatsApp channel on the fakes (senders A and B allowed);
    storing is retried every 0.2 s."""
    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
             *(server or []),
             "inbox:", "  storage_retry_s: 0.2",
             "llm:", "  model: openai:echo", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {model.base_url}",
             "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
             "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
             f"  graph_base_url: {graph.base_url}", f'  allowed_numbers: ["{SENDER_A}", "{SENDER_B}"]']
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@contextlib.contextmanager
def _small_disk(folder: Path, size: str = "16m") -> Iterator[Path]:
    """A real small file system (tmpfs) mounted on ``folder``; skips where mounting is not allowed."""
    folder.mkdir(parents=True, exist_ok=True)
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(folder)],
                          capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {made.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(folder: Path) -> Path:
    """Fill the file system of ``folder`` to the last byte (ENOSPC); returns the filler file."""
    filler = folder / "filler.bin"
    block = b"\0" * 65536
    with open(filler, "ab", buffering=0) as fh:
        for size in (65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    fh.write(block[:size])
    return filler


def _echoes(graph: FakeGraphAPI, user: str) -> Counter[str]:
    return Counter(m for text in graph.texts_to(user) for m in re.findall(r"ECHO [^\n]*?\b(Q\d{3})\b", text))


async def test_13_disk_full_tells_each_sender_once_per_outage_and_the_log_tells_the_truth(
    tmp_path: Path, fake_graph: FakeGraphAPI, echo_model: EchoModel
) -> None:
    graph, model = fake_graph, echo_model
    model.latency = 0.0
    env = {"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    with _small_disk(tmp_path / "sessions") as disk:
        sabha = SabhaProcess(_whatsapp_config(tmp_path, graph, model), env=env)
        try:
            await sabha.start()
            url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
            async with ClientSession(timeout=ClientTimeout(total=20)) as http:
                assert (await post(http, url, text_notification(SENDER_A, "Q001 before the disk filled")))[0] == 200
                await eventually(lambda: _echoes(graph, SENDER_A)["Q001"] == 1, "the first answer")

                # Outage 1: A writes twice (each offered again, as Meta does), B once.
                filler = _fill(disk)
                bodies = {q: text_notification(user, f"{q} while the disk is full")
                          for q, user in (("Q002", SENDER_A), ("Q003", SENDER_A), ("Q004", SENDER_B))}
                for _ in range(2):
                    for body in bodies.values():
                        assert (await post(http, url, body))[0] == 503  # not stored: not acknowledged
                await eventually(lambda: CANNOT_SAVE in graph.texts_to(SENDER_B), "B to be told")
                filler.unlink()  # space returns; Meta delivers again
                for body in bodies.values():
                    assert (await post(http, url, body))[0] == 200
                await eventually(lambda: _echoes(graph, SENDER_A)["Q003"] and _echoes(graph, SENDER_B)["Q004"],
                                 "the answers once space returned")
                # Each notice went out: the log must not say otherwise.
                assert "could not tell chat" not in sabha.log, sabha.log
                for user in (SENDER_A, SENDER_B):
                    assert sabha.log.count(f"told chat {user}: {CANNOT_SAVE}") == 1, sabha.log
                assert graph.texts_to(SENDER_A).count(CANNOT_SAVE) == 1, graph.texts_to(SENDER_A)  # once per sender
                assert graph.texts_to(SENDER_B).count(CANNOT_SAVE) == 1, graph.texts_to(SENDER_B)

                # Outage 2: told again, once.
                filler = _fill(disk)
                body = text_notification(SENDER_A, "Q005 while the disk is full again")
                assert (await post(http, url, body))[0] == 503
                await eventually(lambda: graph.texts_to(SENDER_A).count(CANNOT_SAVE) == 2, "A told of outage 2")
                filler.unlink()
                assert (await post(http, url, body))[0] == 200
                marker = text_notification(SENDER_A, "Q006 marker")
                assert (await post(http, url, marker))[0] == 200
                await eventually(lambda: _echoes(graph, SENDER_A)["Q006"] == 1, "the marker's answer")
        finally:
            await sabha.close()
    echoes = _echoes(graph, SENDER_A) + _echoes(graph, SENDER_B)
    assert echoes == Counter({f"Q00{i}": 1 for i in range(1, 7)}), echoes  # each answered once
    told = {user: graph.texts_to(user).count(CANNOT_SAVE) for user in (SENDER_A, SENDER_B)}
    print(f"\n'can't save' notices over two outages: {told}")
    assert told == {SENDER_A: 2, SENDER_B: 1}
    assert "could not tell chat" not in sabha.log, sabha.log


# -- 14. slow clients -------------------------------------------------------------------------

SLOW_SERVER = ["  body_timeout_s: 1", "  idle_timeout_s: 2", "  max_pending_bodies: 40"]
ATTACKERS = 200
GIVE_UP_S = 20.0  # how long the test lets an attacker hold its connection before calling it "for ever"


@dataclass
class Slow:
    """One slow client: what it learnt of the server before the connection closed."""

    part: str  # "headers" or "body": which part of the request it sends a byte at a time
    closed_after: float | None = None  # None: still open when the test gave up
    status: int | None = None  # the status line the server answered, if any


async def _slow_client(port: int, path: str, slow: Slow, every: float = 1.0) -> None:
    """Connect and send ``slow.part`` a byte every ``every`` seconds until the server hangs up."""
    start = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"X-Hub-Signature-256: sha256={'0' * 64}\r\nContent-Length: 4096\r\n\r\n").encode()
    trickle = head if slow.part == "headers" else b'{"object": "whatsapp_business_account"' + b" " * 4096
    if slow.part == "body":
        writer.write(head)

    async def send() -> None:
        for i in range(len(trickle)):
            writer.write(trickle[i:i + 1])
            await writer.drain()
            await asyncio.sleep(every)

    sender = asyncio.create_task(send())
    answer = b""
    try:
        with contextlib.suppress(TimeoutError):  # still open then: closed_after stays None
            async with asyncio.timeout(GIVE_UP_S):
                with contextlib.suppress(ConnectionError):  # a reset is a close too
                    while chunk := await reader.read(4096):
                        answer += chunk
                slow.closed_after = time.monotonic() - start
                if answer.startswith(b"HTTP/1.1 "):
                    slow.status = int(answer[9:12])
    finally:
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, OSError):  # ConnectionError is an OSError
            await sender
        writer.close()


async def test_14_slow_clients_are_disconnected_while_a_normal_webhook_is_answered(
    tmp_path: Path, fake_graph: FakeGraphAPI, echo_model: EchoModel
) -> None:
    graph, model = fake_graph, echo_model
    model.latency = 0.0
    env = {"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    sabha = SabhaProcess(_whatsapp_config(tmp_path, graph, model, server=SLOW_SERVER), env=env)
    slow = [Slow("body" if i % 2 else "headers") for i in range(ATTACKERS)]
    try:
        await sabha.start()
        assert sabha.port is not None
        url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
        attack = asyncio.gather(*(_slow_client(sabha.port, "/whatsapp/webhook", s) for s in slow))
        await asyncio.sleep(0.5)  # every attacker connected and sending
        async with ClientSession(timeout=ClientTimeout(total=GIVE_UP_S)) as http:
            start = time.monotonic()
            status, _ = await post(http, url, text_notification(SENDER_A, "Q001 during the attack"))
            acked = time.monotonic() - start
            assert status == 200
            await eventually(lambda: _echoes(graph, SENDER_A)["Q001"] == 1, "the answer during the attack")
        await attack
    finally:
        await sabha.close()
    still_open = [s for s in slow if s.closed_after is None]
    closed = sorted(s.closed_after for s in slow if s.closed_after is not None)
    statuses = Counter(s.status for s in slow)
    print(f"\n{ATTACKERS} slow clients (a byte a second; body_timeout_s 1, idle_timeout_s 2, max_pending_bodies 40): "
          f"{len(still_open)} still open after {GIVE_UP_S:.0f} s; closed after "
          f"{closed[len(closed) // 2] if closed else 0:.1f} s median, {closed[-1] if closed else 0:.1f} s at most; "
          f"answers {dict(statuses)}; the normal webhook acknowledged in {acked:.2f} s")
    assert not still_open, f"{len(still_open)} of {ATTACKERS} slow connections still open after {GIVE_UP_S} s"
    assert all(s.status in (408, 503) for s in slow if s.part == "body"), statuses  # told why, then closed
    assert statuses[503] > 0, statuses  # the cap was reached during the attack, and the webhook still passed

"""The operations commands as a user sees them: ``sabha status``, ``doctor``, ``inbox`` and ``cost``.

Each test runs the CLI (``bot.cli.main.main``) and reads what it prints and its exit
code. ``status`` is checked without a daemon, with a ``daemon.json`` a crash left behind,
and against a real ``sabha run``; ``doctor`` offline (secrets, data dir, an invalid config)
and online against the local fakes (a working and a rejected Telegram token, a closed
port, an OpenAI-compatible server); ``inbox retry`` re-queues an abandoned message that a
real ``sabha run`` then answers.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from board.app import Board
from board.envelope import Envelope, Reply
from board.spending.ledger import Ledger, LLMCallRecord
from bot.app import all_migrations
from bot.cli.main import main
from bot.config.load import load_config
from bot.intake.inbox import Arrival, Inbox, InboxStatus
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, TOKEN, eventually


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``sabha ARGV``: (exit code, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def arun(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The same from an async test (the CLI runs its own event loop, so in a thread)."""
    code = await asyncio.to_thread(main, list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def plain_config(root: Path, *lines: str) -> Path:
    """A config with the offline model, the default workspace and ``lines`` appended."""
    main(["init", str(root)])
    path = root / "sabha.yaml"
    path.write_text("workspace: ./workspace\ndata_dir: ./sessions\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- status -----------------------------------------------------------------------------


def test_status_without_a_daemon(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = plain_config(tmp_path)
    capsys.readouterr()
    code, out, _ = run(capsys, "status", "--config", str(config))
    assert code == 3
    assert f"Sabha is not running for data dir {tmp_path / 'sessions'} (no daemon.json there)" in out
    assert "nothing received, nothing spent" in out


def test_status_with_a_daemon_json_left_by_a_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = plain_config(tmp_path)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "daemon.json").write_text(json.dumps(
        {"pid": gone.pid, "host": "127.0.0.1", "port": free_port(), "started_at": "2026-01-01T00:00:00+00:00",
         "version": "0.1.0"}), encoding="utf-8")
    capsys.readouterr()
    code, out, _ = run(capsys, "status", "--config", str(config))
    assert code == 3
    assert f"names pid {gone.pid}, which does not run" in out


async def test_status_of_a_running_daemon(tmp_path: Path, fake: FakeTelegramAPI, echo_model: EchoModel,
                                          capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    config = write_config(tmp_path, fake, echo_model, extra=["budget:", "  daily_usd: 5"])
    sabha = await SabhaProcess(config).start()
    try:
        fake.push_text(OWNER, OWNER, "Q001 hello")
        await eventually(lambda: any("ECHO Q001" in m.text for m in fake.sent_to(OWNER)), "the answer", timeout=20)
        await sabha.wait_for_log(r"telegram: @\S+ running")
        code, out, _ = await arun(capsys, "status", "--config", str(config))
        assert sabha.proc is not None
        assert f"running: pid {sabha.proc.pid}" in out, out
        assert "ready: yes" in out
        assert "telegram: running (bot sabha_test_bot, mode polling)" in out
        assert "Inbox: nothing pending" in out
        assert "budget.daily_usd: $0.0000 of $5.00 (0%) ok" in out
        assert "telegram:42" in out  # the owner's spend today
        assert code == 0

        code, out, _ = await arun(capsys, "status", "--config", str(config), "--json")
        report = json.loads(out)
        assert report["daemon"]["alive"] is True and report["daemon"]["ready"]["ready"] is True
        assert report["budget"]["daily_usd"] == 5
    finally:
        await sabha.close()


# -- doctor -----------------------------------------------------------------------------


def test_doctor_offline_names_each_problem_and_its_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = plain_config(tmp_path, "llm:", "  model: openai:gpt-4o-mini")
    (tmp_path / "sessions").write_text("a file where the data dir should be", encoding="utf-8")
    capsys.readouterr()
    code, out, _ = run(capsys, "doctor", "--offline", "--config", str(config))
    assert code == 1
    assert "OK    config:" in out
    assert "FAIL  secrets: openai is configured (openai:gpt-4o-mini) but has no API key" in out
    assert "fix: export OPENAI_API_KEY (keys are read from the environment, never from sabha.yaml)" in out
    assert "OK    workspace:" in out
    assert f"FAIL  data dir: {tmp_path / 'sessions'} is not writable" in out
    assert "OK    sqlite: SQLite" in out and "FTS5" in out
    assert "SKIP  network: 1 endpoint check(s) skipped (--offline)" in out
    assert "OK    recall: by words only (set memory.embedding_model to recall by meaning too)" in out
    assert "2 of 8 checks failed." in out


def test_doctor_reports_an_invalid_config_as_a_failed_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = plain_config(tmp_path, "budget:", "  daily_usd: -1")
    capsys.readouterr()
    code, out, _ = run(capsys, "doctor", "--offline", "--config", str(config))
    assert code == 1
    assert "FAIL  config:" in out and "budget.daily_usd: Input should be greater than or equal to 0" in out


async def test_doctor_online_checks_the_endpoints(tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    lines = ["llm:", "  model: openai:gpt-4o-mini", "  providers:", "    openai:", "      api_key: sk-test",
             f"      base_url: {fake_openai.base_url}", "telegram:", "  token: ${TELEGRAM_BOT_TOKEN}",
             f"  api_base_url: {fake.base_url}", f"  allowed_user_ids: [{OWNER}]"]
    config = plain_config(tmp_path, *lines)
    capsys.readouterr()
    code, out, _ = await arun(capsys, "doctor", "--config", str(config))
    assert "OK    provider openai:" in out, out
    assert "OK    channel telegram:" in out and "@sabha_test_bot" in out
    assert code == 0 and "All 9 checks passed; 2 warning(s)." in out  # the recall line among them
    assert "WARN  voice notes: telegram is on and no transcriber is set" in out  # issue 36 item 14
    assert "WARN  secrets: llm.providers.openai.api_key is written into" in out  # sk-test, literally

    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "999:wrong-token")
    code, out, _ = await arun(capsys, "doctor", "--config", str(config))
    assert code == 1
    assert "FAIL  channel telegram: reachable, but the bot token was refused (HTTP 401)" in out
    assert "fix: copy the token from @BotFather into TELEGRAM_BOT_TOKEN" in out
    assert "wrong-token" not in out

    with socket.socket() as held:  # bound, never listening: refused, and no test alongside is given the port
        held.bind(("127.0.0.1", 0))
        closed = int(held.getsockname()[1])
        config.write_text(config.read_text(encoding="utf-8").replace(fake.base_url,
                                                                     f"http://127.0.0.1:{closed}/bot"),
                          encoding="utf-8")
        code, out, _ = await arun(capsys, "doctor", "--config", str(config))
    assert code == 1
    assert f"FAIL  channel telegram: http://127.0.0.1:{closed}/bot is not reachable" in out


# -- inbox ------------------------------------------------------------------------------


async def _store(board: Board, text: str, message_id: str, status: InboxStatus, *, reply: bool = False,
                 detail: str = "") -> None:
    inbox = Inbox(board.parts.db, "telegram")
    envelope = Envelope(channel="telegram", text=text, sender=str(OWNER), chat_id=str(OWNER), message_id=message_id,
                        is_owner=True)
    [pending] = await inbox.store([Arrival(envelope, f"{OWNER}/-")])
    if reply:
        await inbox.replied(pending, Reply.to(envelope, role="general", name="Chair", emoji="", text="stored answer"))
    await inbox.finish(pending, status, detail or None)


async def _seed(config: Path) -> None:
    loaded = load_config(config)
    board = await Board.open(loaded.board_settings(), migrations=all_migrations())
    try:
        await _store(board, "Q101 abandoned one", "101", InboxStatus.ABANDONED,
                     detail="it was received 2.0 h ago, longer than the 1.0 h Sabha answers after a restart")
        await _store(board, "Q102 failed one", "102", InboxStatus.FAILED, reply=True, detail="chat not found")
        await _store(board, "Q103 maybe arrived", "103", InboxStatus.MAY_HAVE_ARRIVED, reply=True)
        await _store(board, "Q104 answered", "104", InboxStatus.ANSWERED)
    finally:
        await board.close()


def _ids(out: str) -> dict[str, int]:
    """``Q1xx`` marker -> the ID ``inbox list`` printed for it."""
    found = {}
    for line in out.splitlines():
        parts = line.split()
        for word in parts:
            if word.startswith("Q1") and parts[0].isdigit():
                found[word] = int(parts[0])
    return found


async def test_inbox_list_retry_and_the_next_start_answers_it(tmp_path: Path, fake: FakeTelegramAPI,
                                                             echo_model: EchoModel,
                                                             capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    config = write_config(tmp_path, fake, echo_model)
    await _seed(config)
    c = str(config)

    code, out, _ = await arun(capsys, "inbox", "list", "--config", c)
    assert code == 0
    assert out.splitlines()[0].split()[:4] == ["ID", "channel", "chat", "status"]
    ids = _ids(out)
    assert set(ids) == {"Q101", "Q102", "Q103", "Q104"}
    assert "why: it was received 2.0 h ago" in out

    code, out, _ = await arun(capsys, "inbox", "list", "--status", "abandoned", "--config", c)
    assert set(_ids(out)) == {"Q101"}
    code, out, _ = await arun(capsys, "inbox", "list", "--channel", "whatsapp", "--config", c)
    assert out.strip() == "No stored messages with channel whatsapp."
    code, out, _ = await arun(capsys, "inbox", "list", "--json", "--limit", "2", "--config", c)
    rows: list[dict[str, Any]] = json.loads(out)
    assert [r["text"] for r in rows] == ["Q104 answered", "Q103 maybe arrived"]

    code, out, err = await arun(capsys, "inbox", "retry", str(ids["Q103"]), "--config", c)
    assert code == 2
    assert "may have arrived" in err and "could send it twice" in err and "--force" in err
    code, out, err = await arun(capsys, "inbox", "retry", str(ids["Q104"]), "--config", c)
    assert code == 2 and "cannot be retried: it was answered" in err

    code, out, _ = await arun(capsys, "inbox", "retry", str(ids["Q102"]), "--config", c)
    assert code == 0
    assert "failed -> replied; its stored reply will be delivered again (no new model call)" in out
    code, out, _ = await arun(capsys, "inbox", "retry", str(ids["Q101"]), "--config", c)
    assert code == 0
    assert "abandoned -> received; the board will answer it again" in out
    assert "It is answered at the next start (`sabha run`)." in out

    sabha = await SabhaProcess(config).start()
    try:
        await eventually(lambda: any("ECHO Q101 abandoned one" in m.text for m in fake.sent_to(OWNER)),
                         "the retried message answered", timeout=20)
        await eventually(lambda: any("stored answer" in m.text for m in fake.sent_to(OWNER)),
                         "the stored reply delivered", timeout=20)
        assert echo_model.questions == ["Q101 abandoned one"], "the stored reply needs no model call"
        code, out, _ = await arun(capsys, "inbox", "list", "--status", "answered", "--config", c)
        assert {"Q101", "Q102", "Q104"} <= set(_ids(out))
    finally:
        await sabha.close()


# -- cost -------------------------------------------------------------------------------


async def test_cost_shows_spend_against_the_budgets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = plain_config(tmp_path, "budget:", "  daily_usd: 2", "  per_sender_daily_usd: 0.5")
    loaded = load_config(config)
    board = await Board.open(loaded.board_settings(), migrations=all_migrations())
    try:
        for sender, usd in (("telegram:43", 0.75), ("whatsapp:15550001111", 0.25)):
            await board.parts.ledger.record_llm_call(LLMCallRecord(provider="openai", model="openai:gpt-4o",
                                                                   outcome="ok",
                                                             cost_usd=usd, sender=sender))
        assert isinstance(board.parts.ledger, Ledger)
    finally:
        await board.close()
    capsys.readouterr()
    code, out, _ = await arun(capsys, "cost", "--config", str(config))
    assert code == 0
    assert "budget.daily_usd: $1.0000 of $2.00 (50%) ok" in out
    assert "budget.per_sender_daily_usd: $0.50 per sender (not the owner)" in out
    assert "telegram:43                      $0.7500 of $0.50  REACHED" in out
    assert "whatsapp:15550001111             $0.2500 of $0.50" in out

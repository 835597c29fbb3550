"""Consent through a real ``sabha run`` on the fake Telegram API with a scripted model (the fake OpenAI API), the
research advisor given ``@modelcontextprotocol/server-filesystem`` (npm, stdio) whose ``write_file`` is not
read-only: the owner is asked in the research topic before any write.

- the owner's Allow once, pressed in the very topic where the advisor waits (the turn holds that topic's lane),
  runs the write exactly once (the file holds the content; one ledger row); a stranger's and a member's presses
  before it change nothing; Always allow: the next write runs without asking;
- Deny and a timeout answer without the write and say so;
- kill -9 after the Allow and the write, before the answer (the model's next request is held): after the restart
  the message is answered again, the same call is not made again (the file untouched since), and the owner is
  told what happened.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
from pathlib import Path

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI, SentMessage
from tests.support.mcp import npm_server, server_pids
from tests.support.telegram import FORUM, FRIEND, OWNER, STRANGER, eventually

QUESTION = "wants to run fs.write_file"


def config(tmp_path: Path, fake: FakeTelegramAPI, model: FakeOpenAI, files: Path, timeout_s: float) -> Path:
    """A board whose research advisor has the filesystem server on ``files``."""
    files.mkdir(parents=True, exist_ok=True)
    # slow_notice_s 0: no "working on it" edited into the answer while the advisor waits (each answer its own message)
    lines = ["board:", "  slow_notice_s: 0",
             "  agents:", "    research:", '      tools: ["mcp:fs"]',
             "mcp:", "  servers:", "    fs:", f"      command: {npm_server('mcp-server-filesystem')}",
             f"      args: [{files}]", "tools:", f"  consent_timeout_s: {timeout_s}"]
    return write_config(tmp_path, fake, model, stream=False, extra=lines)  # type: ignore[arg-type]


def research_topic(fake: FakeTelegramAPI) -> int:
    return next(int(t["message_thread_id"]) for t in fake.created_topics if "research" in str(t["name"]).lower())


def in_topic(fake: FakeTelegramAPI, thread: int, fragment: str) -> list[SentMessage]:
    return [m for m in fake.sent_to(FORUM, thread) if fragment in m.text]


async def said(fake: FakeTelegramAPI, thread: int, fragment: str, count: int = 1) -> list[SentMessage]:
    """Wait until ``count`` messages in the topic contain ``fragment``; those messages."""
    await eventually(lambda: len(in_topic(fake, thread, fragment)) >= count, f"{count}x {fragment!r}", timeout=180)
    return in_topic(fake, thread, fragment)


def tool_rows(tmp_path: Path) -> list[tuple[str, str, int]]:
    with sqlite3.connect(tmp_path / "sessions" / "sabha.db") as db:
        return db.execute("SELECT server, name, ok FROM tool_calls ORDER BY id").fetchall()


def approvals(tmp_path: Path) -> list[tuple[int, str | None, str | None, str | None, str | None]]:
    with sqlite3.connect(tmp_path / "sessions" / "sabha.db") as db:
        return db.execute("SELECT id, answer, answered_by, started_at, finished_at FROM tool_approvals "
                          "ORDER BY id").fetchall()


def write(model: FakeOpenAI, files: Path, name: str, content: str, answer: str) -> None:
    model.script_tool_call("fs__write_file", {"path": str(files / name), "content": content})
    model.script_text(answer)


async def test_allow_once_in_the_waiting_topic_writes_once_presses_of_others_change_nothing_always_allow_asks_no_more(
        tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI) -> None:
    files = tmp_path / "files"
    sabha = SabhaProcess(config(tmp_path, fake, fake_openai, files, timeout_s=120))
    write(fake_openai, files, "a.txt", "first", "Written [fs.write_file].")
    write(fake_openai, files, "b.txt", "second", "Written again [fs.write_file].")
    write(fake_openai, files, "c.txt", "third", "Written a third time [fs.write_file].")
    try:
        await sabha.start()
        await sabha.wait_for_log(r"mcp server fs ready")
        topic = research_topic(fake)
        fake.push_text(FORUM, OWNER, "Please write 'first' into a.txt", thread_id=topic)
        [question] = await said(fake, topic, QUESTION)
        assert [label for label, _ in fake.buttons_of(FORUM, question.message_id)] == [
            "Allow once", "Always allow tool", "Deny"]
        assert '"content": "first"' in question.text and "(#1)" in question.text

        fake.push_press(FORUM, question.message_id, STRANGER, "Allow once")
        await eventually(lambda: len(fake.answered_presses) == 1, "the stranger's press answered")
        assert "only the board's members" in fake.answered_presses[0]["text"]
        fake.push_press(FORUM, question.message_id, FRIEND, "Allow once")
        await said(fake, topic, "/allow is for the board's owner only")
        assert "Only the board's owner can /allow" in fake.answered_presses[1]["text"]
        assert not (files / "a.txt").exists() and approvals(tmp_path)[0][1] is None

        fake.push_press(FORUM, question.message_id, OWNER, "Allow once")
        await said(fake, topic, "Allowed once: fs.write_file (#1)")
        await said(fake, topic, "Written [fs.write_file].")
        assert (files / "a.txt").read_text() == "first"
        [row] = approvals(tmp_path)
        assert row[1:3] == ("allowed_once", f"telegram:{OWNER}") and row[3] and row[4]  # started, then finished

        fake.push_text(FORUM, OWNER, "Now 'second' into b.txt", thread_id=topic)
        [_, second] = await said(fake, topic, QUESTION, count=2)
        fake.push_press(FORUM, second.message_id, OWNER, "Always allow tool")
        await said(fake, topic, "Written again [fs.write_file].")
        fake.push_text(FORUM, OWNER, "And 'third' into c.txt", thread_id=topic)
        await said(fake, topic, "Written a third time [fs.write_file].")
        assert len(in_topic(fake, topic, QUESTION)) == 2  # the third write was not asked for
        assert [(files / n).read_text() for n in ("a.txt", "b.txt", "c.txt")] == ["first", "second", "third"]
        assert [r[1] for r in approvals(tmp_path)] == ["allowed_once", "always_allowed", "always_allowed"]
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()
    assert tool_rows(tmp_path) == [("fs", "fs__write_file", 1)] * 3  # each write once in the ledger


async def test_deny_and_a_timeout_answer_without_the_write_and_say_so(
        tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI) -> None:
    files = tmp_path / "files"
    sabha = SabhaProcess(config(tmp_path, fake, fake_openai, files, timeout_s=15))
    fake_openai.script_tool_call("fs__write_file", {"path": str(files / "d.txt"), "content": "no"})
    fake_openai.script_text("I could not write it: the owner said no.")
    fake_openai.script_tool_call("fs__write_file", {"path": str(files / "e.txt"), "content": "late"})
    fake_openai.script_text("I could not write it: nobody allowed it in time.")
    try:
        await sabha.start()
        await sabha.wait_for_log(r"mcp server fs ready")
        topic = research_topic(fake)
        fake.push_text(FORUM, OWNER, "Write 'no' into d.txt", thread_id=topic)
        [question] = await said(fake, topic, QUESTION)
        fake.push_press(FORUM, question.message_id, OWNER, "Deny")
        await said(fake, topic, "Denied: fs.write_file (#1) will not run")
        await said(fake, topic, "the owner said no")
        denied = fake_openai.requests[1].json["messages"][-1]["content"]
        assert "The owner denied fs.write_file (#1); it was not run" in denied

        fake.push_text(FORUM, OWNER, "Write 'late' into e.txt", thread_id=topic)
        [_, unanswered] = await said(fake, topic, QUESTION, count=2)
        await said(fake, topic, "nobody allowed it in time")
        late = fake_openai.requests[3].json["messages"][-1]["content"]
        assert "did not answer within 15 seconds whether fs.write_file may run (#2); it was not run" in late
        fake.push_press(FORUM, unanswered.message_id, OWNER, "Allow once")  # too late: nothing runs
        await said(fake, topic, "#2 (fs.write_file) was not answered in time")
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()
    assert not (files / "d.txt").exists() and not (files / "e.txt").exists()
    assert tool_rows(tmp_path) == [("fs", "fs__write_file", 0)] * 2  # in the ledger as calls that did not run
    assert [r[1] for r in approvals(tmp_path)] == ["denied", "timed_out"]


async def test_kill_after_the_allow_and_before_the_answer_never_writes_twice_and_the_owner_is_told(
        tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI) -> None:
    files = tmp_path / "files"
    path = config(tmp_path, fake, fake_openai, files, timeout_s=120)
    arguments = {"path": str(files / "k.txt"), "content": "once"}
    fake_openai.script_tool_call("fs__write_file", arguments)
    fake_openai.script_delay(600, "never said: Sabha is killed while this answer is held")
    first = SabhaProcess(path)
    servers: list[int] = []
    try:
        await first.start()
        await first.wait_for_log(r"mcp server fs ready")
        topic = research_topic(fake)
        fake.push_text(FORUM, OWNER, "Write 'once' into k.txt", thread_id=topic)
        [question] = await said(fake, topic, QUESTION)
        fake.push_press(FORUM, question.message_id, OWNER, "Allow once")
        await fake_openai.wait_for_requests(2, timeout=180)  # the write ran; the answer after it is held
        assert (files / "k.txt").read_text() == "once"
        assert first.proc is not None
        servers = server_pids(first.proc.pid)
        await first.signal(signal.SIGKILL)
    finally:
        await first.close()
        for pid in servers:  # the killed daemon's server processes
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    written = (files / "k.txt").stat()
    [row] = approvals(tmp_path)
    assert row[1] == "allowed_once" and row[3] is not None  # recorded as started before the call

    fake_openai.script_tool_call("fs__write_file", arguments)  # the same message is answered again: the same call
    fake_openai.script_text("The file was written before the restart; I did not write it again.")
    second = SabhaProcess(path)
    try:
        await second.start()
        await said(fake, topic, "I did not write it again")
        told = await said(fake, topic, "fs.write_file (#1)")
        assert any("not run again" in m.text for m in told), [m.text for m in told]
        note = fake_openai.requests[3].json["messages"][-1]["content"]
        assert "fs.write_file (#1)" in note and "not run again" in note
        assert await second.signal(signal.SIGTERM) == 0
    finally:
        await second.close()
    after = (files / "k.txt").stat()
    assert (after.st_ino, after.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)  # not written again
    assert (files / "k.txt").read_text() == "once"
    assert len(approvals(tmp_path)) == 1


async def test_kill_while_the_allowed_call_is_in_flight_never_runs_it_again_and_the_owner_is_told(
        tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI) -> None:
    """The window the issue names: allowed, started at the server, not finished (our fake's ``append_held`` holds
    the call after appending its line) when Sabha is killed. After the restart the same call is not made again (one
    line at the server) and the owner is told it may already have run."""
    import sys

    from tests.support.daemon import write_config as base_config
    from tests.support.mcp import REPO

    calls = tmp_path / "calls.txt"  # a line per call the server received
    path = base_config(tmp_path, fake, fake_openai, stream=False, extra=[  # type: ignore[arg-type]
        "board:", "  slow_notice_s: 0", "  agents:", "    research:", '      tools: ["mcp:fake"]',
        "mcp:", "  servers:", "    fake:", f"      command: {sys.executable}",
        "      args: [-m, tests.support.fakes.mcp_server]", f"      cwd: {REPO}", "      call_timeout_s: 3600",
        "tools:", "  consent_timeout_s: 120"])
    arguments = {"path": str(calls), "line": "called"}
    fake_openai.script_tool_call("fake__append_held", arguments)
    first = SabhaProcess(path)
    servers: list[int] = []
    try:
        await first.start()
        await first.wait_for_log(r"mcp server fake ready")
        topic = research_topic(fake)
        fake.push_text(FORUM, OWNER, "Append a line to calls.txt", thread_id=topic)
        [question] = await said(fake, topic, "wants to run fake.append_held")
        assert not calls.exists()  # nothing runs before the owner's answer
        fake.push_press(FORUM, question.message_id, OWNER, "Allow once")
        await eventually(lambda: calls.exists() and calls.read_text() == "called\n", "the call at the server",
                         timeout=180)
        [row] = approvals(tmp_path)
        assert row[1] == "allowed_once" and row[3] is not None and row[4] is None  # started, not finished
        assert first.proc is not None
        servers = server_pids(first.proc.pid)
        await first.signal(signal.SIGKILL)
    finally:
        await first.close()
        for pid in servers:  # the killed daemon's server, still holding the call
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    Path(f"{calls}.go").touch()  # a call made again would now answer at once (and show as a second line)
    fake_openai.script_tool_call("fake__append_held", arguments)  # the same message answered again: the same call
    fake_openai.script_text("It may have been appended before the restart; I did not append it again.")
    second = SabhaProcess(path)
    try:
        await second.start()
        await said(fake, topic, "I did not append it again")
        [told] = await said(fake, topic, "may already have run")
        assert "fake.append_held (#1) was allowed and started" in told.text and "not run again" in told.text
        note = fake_openai.requests[2].json["messages"][-1]["content"]
        assert "fake.append_held (#1)" in note and "may already have run" in note and "not run again" in note
        assert await second.signal(signal.SIGTERM) == 0
    finally:
        await second.close()
    assert calls.read_text() == "called\n"  # the server got the call once
    [row] = approvals(tmp_path)
    assert row[4] is None  # never recorded as finished: it may have run

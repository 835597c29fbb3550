"""Reminders in the terminal (``sabha chat``, what ``make run`` starts): the offline chair dates the
first action item two minutes out; when the chat's clock (a file the test writes) reaches it, the
reminder is printed between the lines, once, and ``/done`` closes the item. A real chat on a
pseudo-terminal (pexpect), as in tests/bot/cli/test_chat_tty.py."""

from __future__ import annotations

import io
import sys
from datetime import timedelta
from pathlib import Path

import pexpect

from board.clock import FileClock
from tests.bot.cli.test_chat_tty import PROMPT, chat_env, finish, screen
from tests.support.schedule import START


def test_the_chat_prints_a_meetings_reminder_when_it_is_due(tmp_path: Path) -> None:
    clock = tmp_path / "clock"
    FileClock.write(clock, START)
    env = {**chat_env(tmp_path), "SABHA_TEST_MODE": "1", "SABHA_TEST_CLOCK": str(clock)}
    board = tmp_path / "board"
    assert pexpect.run(f"{sys.executable} -m bot.cli.main init {board}", env=env, timeout=60,
                       withexitstatus=True)[1] == 0
    child = pexpect.spawn(sys.executable, ["-m", "bot.cli.main", "chat"], cwd=str(board), env=env,
                          encoding="utf-8", timeout=60, dimensions=(40, 200))
    child.logfile_read = io.StringIO()
    child.expect(PROMPT)
    child.sendline("/meeting Should we open a Pune office?")
    child.expect(r"due \+2m\)")  # the minutes: the first item is due in two minutes
    child.expect(PROMPT)
    assert "owes action #1 " not in screen(child)
    FileClock.write(clock, START + timedelta(minutes=2))
    child.expect(r"Your reminder: the Chair owes action #1 ")
    child.expect(r"\[Done: /done 1\] \[Snooze: /snooze 1\]")  # the terminal shows its buttons as commands
    child.sendline("/done 1")
    child.expect(r"Done: #1 ")
    child.sendline("/quit")
    assert finish(child) == 0
    assert screen(child).count("owes action #1 ") == 1

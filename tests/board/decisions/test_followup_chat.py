"""Follow-through as a person meets it first (issue 38): a real ``sabha chat`` on a pseudo-terminal (pexpect),
on the offline model, its time read from a file the test writes (``SABHA_TEST_CLOCK``), as ``make run`` starts it.

One meeting in the chat leaves action items (the first, the Chair's, due in two minutes, the others later) and
predictions to resolve within days. Then: a reminder names who owes the item in
the board's words ("the Chair owes action #1"), offers Done and Snooze once, and says how late it is; reopening
the chat days later summarises what waits in at most three lines instead of printing every reminder; ``sabha
status`` says how many rows it did not list and marks the late ones; ``/stats`` below the minimum says how to get
a score."""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pexpect
import pytest

from board.clock import FileClock
from tests.bot.cli.test_chat_tty import ANSI, PROMPT, chat_env, finish, screen
from tests.support.schedule import START

#: how the chat's banner lines begin (its name, its board, how to talk to it, warnings such as TEST MODE)
BANNER = ("Sabha ", "Board ", "Type a message", "\u26a0")
#: the lines of the chat itself and of the /actions the test asks for
CHAT = ("/actions", "/quit", "Goodbye.", "\u2026 the board is thinking", "Open action items", "#")
#: two days and two minutes after START: the Chair's item (due START + 2 min) is two days late
LATER = START + timedelta(days=2, minutes=4)


@dataclass
class Chat:
    """A board, its clock file and the environment its ``sabha`` commands run in."""

    board: Path
    clock: Path
    env: dict[str, str]

    def open(self, width: int = 200) -> pexpect.spawn:
        child = pexpect.spawn(sys.executable, ["-m", "bot.cli.main", "chat"], cwd=str(self.board), env=self.env,
                              encoding="utf-8", timeout=60, dimensions=(40, width))
        child.logfile_read = io.StringIO()
        return child

    def at(self, moment: object) -> None:
        FileClock.write(self.clock, moment)  # type: ignore[arg-type]

    def sabha(self, *args: str) -> str:
        """What ``sabha *args`` printed (``sabha status`` exits 1 when no daemon runs: not checked)."""
        out = pexpect.run(f"{sys.executable} -m bot.cli.main {' '.join(args)}", cwd=str(self.board), env=self.env,
                          timeout=60, encoding="utf-8")
        return ANSI.sub("", str(out))


@pytest.fixture
def chat(tmp_path: Path) -> Chat:
    clock = tmp_path / "clock"
    FileClock.write(clock, START)
    env = {**chat_env(tmp_path), "SABHA_TEST_MODE": "1", "SABHA_TEST_CLOCK": str(clock)}
    board = tmp_path / "board"
    assert pexpect.run(f"{sys.executable} -m bot.cli.main init {board}", env=env, timeout=60,
                       withexitstatus=True)[1] == 0
    return Chat(board, clock, env)


@pytest.fixture
def child(chat: Chat) -> Iterator[pexpect.spawn]:
    """The chat, after one meeting held in it."""
    spawned = chat.open()
    try:
        spawned.expect(PROMPT)
        spawned.sendline("/meeting Should we open a Pune office?")
        spawned.expect(r"due \+2m\)")  # the minutes: the first item is due in two minutes
        spawned.expect(PROMPT)
        yield spawned
    finally:
        if spawned.isalive():
            spawned.terminate(force=True)


def ask(child: pexpect.spawn, line: str, expect: str) -> str:
    """Send ``line``; what the chat printed from then until ``expect`` and the next prompt."""
    start = len(screen(child))
    child.sendline(line)
    child.expect(expect)
    child.expect(PROMPT)
    return screen(child)[start:]


def block(text: str, start: str) -> str:
    """The reminder in ``text`` that contains ``start``: up to its line of buttons (or the next prompt)."""
    tail = text[text.index(start):]
    buttons = re.search(r"^\[Done: .*$", tail, re.MULTILINE)
    return tail.split(PROMPT, 1)[0] if buttons is None else tail[:buttons.end()]


def test_a_reminder_says_who_owes_the_item_in_the_owners_words(chat: Chat, child: pexpect.spawn) -> None:
    minutes = " ".join(screen(child).split())
    assert "(the Chair owes it, due +2m)" in minutes and "Research owes it" in minutes  # the minutes too
    chat.at(START + timedelta(minutes=2))
    child.expect(r"Your reminder: the Chair owes action #1 ")
    child.expect(PROMPT)
    reminder = " ".join(block(screen(child), "Your reminder").split())  # as one line, however it wrapped
    assert "Reminder for general" not in reminder and "owner" not in reminder.lower()
    assert "due Wed 2026-11-25 09:02 UTC" in reminder
    actions = ask(child, "/actions", "Open action items")
    assert "the Chair owes it" in actions and "Research owes it" in actions and "(owner:" not in actions
    done = ask(child, "/done 1", r"Done: #1 ")
    assert "owed by the Chair" in done and "owner:" not in done
    child.sendline("/quit")
    assert finish(child) == 0


def test_a_reminder_offers_done_and_snooze_once(chat: Chat, child: pexpect.spawn) -> None:
    chat.at(START + timedelta(minutes=2))
    child.expect(r"action #1 ")
    child.expect(PROMPT)
    reminder = block(screen(child), "action #1 ")
    assert reminder.count("/done 1") == 1, reminder  # the terminal has no buttons: said once, as the commands
    assert reminder.count("/snooze 1") == 1, reminder
    child.sendline("/quit")
    assert finish(child) == 0


def test_a_late_reminder_and_actions_say_how_late(chat: Chat, child: pexpect.spawn) -> None:
    chat.at(LATER)  # the chat was away (a laptop asleep): the reminder goes out two days late
    child.expect(r"action #1 ")
    child.expect(PROMPT)
    assert "overdue by 2 days" in " ".join(block(screen(child), "action #1 ").split())
    actions = ask(child, "/actions", "Open action items")
    first = next(line for line in actions.splitlines() if line.startswith("#1 "))
    assert "overdue by 2 days" in first, actions
    child.sendline("/quit")
    assert finish(child) == 0


def test_opening_the_chat_summarises_what_waits_in_at_most_three_lines(chat: Chat, child: pexpect.spawn) -> None:
    child.sendline("/quit")
    assert finish(child) == 0
    chat.at(START + timedelta(days=3))  # the Chair's and Content's items are late, five predictions wait
    again = chat.open(width=1000)  # no banner line wraps: every other line is counted
    try:
        again.expect(PROMPT)
        again.sendline("/actions")
        again.expect("Open action items")
        again.expect(PROMPT)
        again.sendline("/quit")
        assert finish(again) == 0
    finally:
        if again.isalive():
            again.terminate(force=True)
    everything = screen(again)
    lines = [line.replace(PROMPT, "").strip() for line in everything.splitlines()]
    waiting = [line for line in lines if line and not line.startswith((*BANNER, *CHAT))]
    assert 1 <= len(waiting) <= 3, f"{len(waiting)} lines besides the banner and /actions: {waiting}"
    said = " ".join(waiting)
    assert re.search(r"\d+ actions are overdue \(#1 by 2 days\)", said) and "/actions" in said, said
    assert "5 predictions are ready to check" in said and "/predictions" in said, said
    assert all(len(line) <= 80 for line in waiting), waiting  # no line wraps on an 80-column terminal
    assert "Your reminder" not in everything and "Time to check a prediction" not in everything
    third = chat.open()  # and they are not printed later either: the summary stood for them
    try:
        third.expect(PROMPT)
        third.sendline("/actions")
        third.expect("Open action items")
        third.expect(PROMPT)
        third.sendline("/quit")
        assert finish(third) == 0
    finally:
        if third.isalive():
            third.terminate(force=True)
    assert "Your reminder" not in screen(third) and "Time to check a prediction" not in screen(third)


def test_sabha_status_says_how_many_it_did_not_list_and_which_are_late(chat: Chat, child: pexpect.spawn) -> None:
    child.sendline("/quit")
    assert finish(child) == 0
    chat.at(LATER)
    status = chat.sabha("status")
    rows = re.search(r"for the terminal \((\d+)\)", status)
    assert rows is not None and int(rows.group(1)) > 5, status  # the meeting's reminders and resolution requests
    terminal = status[rows.start():].split("Decisions:", 1)[0]
    more = f"and {int(rows.group(1)) - 5} more (`sabha actions` and `sabha predictions list` show them)"
    assert more in terminal, terminal
    first = next(line for line in terminal.splitlines() if "reminder:action:1" in line or "action #1" in line)
    assert "overdue by 2 days" in first, terminal


def test_stats_below_the_minimum_says_how_to_get_a_score(chat: Chat, child: pexpect.spawn) -> None:
    ask(child, "/resolve 1 yes", r"#1")
    stats = ask(child, "/stats", "track record")
    said = " ".join(stats.split())
    assert "1 prediction resolved" in said, said
    assert "4 more" in said, said
    assert "/predictions" in said and "/resolve" in said and "Track record page" in said, said
    assert "sabha demo" in said, said
    child.sendline("/quit")
    assert finish(child) == 0

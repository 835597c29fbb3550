"""One ``sabha chat`` per board (issue 38): a second chat, typed at or piped, is refused with one line naming
the first (its pid) instead of interleaving one conversation with it; a chat killed with SIGKILL leaves no
lock behind that blocks the next one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pexpect

from tests.support.terminal import ended, make_board, problems, screen, spawn_sabha, terminal_env

PROMPT = "you>"


def test_a_second_chat_is_refused_naming_the_first_and_a_killed_one_blocks_nothing(tmp_path: Path) -> None:
    board = make_board(tmp_path)
    with ended(spawn_sabha(board, tmp_path, "chat")) as first:
        first.expect(PROMPT)
        with ended(spawn_sabha(board, tmp_path, "chat")) as second:  # typed at
            second.expect(pexpect.EOF)
            second.close()
            output = screen(second)
        assert second.exitstatus == 2, output
        lines = [line for line in output.splitlines() if line.strip()]
        assert len(lines) == 1 and f"pid {first.pid}" in lines[0] and "sabha chat" in lines[0], output
        assert not problems(output), output
        piped = subprocess.run([sys.executable, "-m", "bot.cli", "chat"], cwd=board, env=terminal_env(tmp_path),
                               input="hello\n", capture_output=True, text=True, timeout=120)
        assert piped.returncode == 2 and piped.stdout == "", piped
        assert len(piped.stderr.splitlines()) == 1 and f"pid {first.pid}" in piped.stderr, piped.stderr
        first.send("still mine\r")  # the first goes on undisturbed
        first.expect("General:")
        first.expect(PROMPT)
        os.kill(first.pid, signal.SIGKILL)
        first.expect(pexpect.EOF)
    with ended(spawn_sabha(board, tmp_path, "chat")) as again:
        again.expect(PROMPT)
        again.send("/quit\r")
        again.expect("Goodbye.")
        again.expect(pexpect.EOF)
        again.close()
    assert again.exitstatus == 0, screen(again)


def test_a_chat_lock_that_cannot_be_opened_is_said_in_one_line_and_the_chat_opens(tmp_path: Path) -> None:
    """A ``chat.lock`` sabha cannot open (here a folder; in life another user's file) was skipped without a
    word, so two chats could interleave unseen: the chat says so in one line and carries on."""
    board = make_board(tmp_path)
    (board / "sessions").mkdir(exist_ok=True)
    (board / "sessions" / "chat.lock").mkdir()
    with ended(spawn_sabha(board, tmp_path, "chat")) as chat:
        chat.expect(PROMPT)
        chat.send("/quit\r")
        chat.expect("Goodbye.")
        chat.expect(pexpect.EOF)
        chat.close()
        output = screen(chat)
    assert chat.exitstatus == 0, output
    said = [line for line in output.splitlines() if "cannot take the lock" in line]
    assert len(said) == 1 and str(board / "sessions" / "chat.lock") in said[0], output
    assert not problems(output), output

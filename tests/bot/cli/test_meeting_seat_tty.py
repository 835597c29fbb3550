"""The owner at the table in ``sabha meeting`` (issue 40): a real ``sabha meeting`` on a pseudo-terminal, its model a
slow fake that sits meetings (:class:`tests.support.fakes.seat_model.SeatModel`: the statements of a held round wait
at the model until the test lets them go, so "during round 1" holds however slow the machine is).

- typed at: the meeting says once that the owner may speak; a line typed during round 1 is quoted to every member
  in round 2 as the owner's and shown in the sequence; ``/wrap`` during round 2 ends the meeting after it with a
  decision (no round 3 is asked), exit code 0, nothing Python should never show;
- Ctrl-C while the prompt reads keys does what it does without one: ``Interrupted.``, exit code 130, the meeting
  recorded as cancelled;
- piped (stdin not a terminal): nothing is read, the lines are not contributions, the meeting runs its rounds.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pexpect

from bot.cli.meeting_seat import SEAT_LINE
from tests.support.fakes.seat_model import SeatModel
from tests.support.seat import write_seat_config
from tests.support.terminal import REPO, ended, problems, screen, spawn_sabha, terminal_env

SPECIALISTS = 5  # the default board roster's members besides the chair
SAID = "Our biggest customer will churn if we move the office."
TOPIC = "Should we open a Pune office?"
WAIT_S = 120.0  # a bound only a hung process reaches


def board_on(tmp_path: Path, model: SeatModel) -> Path:
    """A board folder whose model is the fake (three rounds: the default)."""
    return write_seat_config(tmp_path / "board", model).parent


async def until(what: str, check: Callable[[], bool], child: pexpect.spawn | None = None) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if child is not None and not child.isalive():
            raise AssertionError(f"{what}: sabha ended first:\n{screen(child)}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not so after {WAIT_S} s" + (f":\n{screen(child)}" if child else ""))
        await asyncio.sleep(0.05)


async def expect(child: pexpect.spawn, text: str) -> None:
    """Wait until ``child`` printed ``text`` (reading it off the terminal in a thread: the model runs in this loop)."""
    await asyncio.to_thread(child.expect_exact, text, timeout=WAIT_S)


def stop_reasons(folder: Path) -> list[str]:
    with sqlite3.connect(folder / "sessions" / "sabha.db") as conn:
        return [str(r[0]) for r in conn.execute("SELECT stop_reason FROM meetings")]


async def test_typed_lines_reach_round_two_and_wrap_ends_it(tmp_path: Path) -> None:
    async with SeatModel(latency=0.2) as model:
        model.hold(1)
        model.hold(2)
        folder = board_on(tmp_path, model)
        try:
            with ended(spawn_sabha(folder, tmp_path, "meeting", "--config", "sabha.yaml", TOPIC)) as child:
                await expect(child, SEAT_LINE)
                await until("every member is asked for round 1", lambda: model.waiting == SPECIALISTS, child)
                child.sendline(SAID)
                await expect(child, "(sent: the board hears it in the next round)")
                model.release(1)
                await until("every member is asked for round 2", lambda: len(model.asked(2)) == SPECIALISTS, child)
                await expect(child, f"🙋 the owner (via terminal): {SAID}")
                child.sendline("/wrap")
                await expect(child, "(wrapping up")
                model.release(2)
                await asyncio.to_thread(child.expect, pexpect.EOF, timeout=WAIT_S)
                child.close()
                output = screen(child)
        finally:
            model.release(1)
            model.release(2)
    for asked in model.asked(2):
        quoted = asked.text.split("the owner says", 1)
        assert len(quoted) == 2 and SAID in quoted[1], f"{asked.role}'s round 2 does not quote the owner:\n{asked.text}"
    assert model.asked(3) == [], "a round 3 was asked after /wrap"
    assert child.exitstatus == 0, output
    assert not problems(output), output
    assert output.count(SEAT_LINE) == 1, output
    assert "== the owner (terminal): Wrapping up" in output, output  # the meeting applied it, in the sequence
    assert "== Meeting ended: wrapped" in output, output
    # the sequence: round 1's statements, the contribution, round 2's
    at = output.index(f"🙋 the owner (via terminal): {SAID}")
    assert output[:at].count("[round 1]") == SPECIALISTS and "[round 2]" not in output[:at], output
    assert output[at:].count("[round 2]") >= SPECIALISTS, output
    assert stop_reasons(folder) == ["wrapped"]


async def test_ctrl_c_at_the_prompt_stops_the_meeting_as_before(tmp_path: Path) -> None:
    async with SeatModel(latency=0.2) as model:
        model.hold(1)
        folder = board_on(tmp_path, model)
        try:
            with ended(spawn_sabha(folder, tmp_path, "meeting", "--config", "sabha.yaml", TOPIC)) as child:
                await expect(child, SEAT_LINE)
                await until("every member is asked for round 1", lambda: model.waiting == SPECIALISTS, child)
                child.sendcontrol("c")
                await asyncio.to_thread(child.expect, pexpect.EOF, timeout=WAIT_S)
                child.close()
                output = screen(child)
        finally:
            model.release(1)
    assert child.exitstatus == 130, output
    assert not problems(output), output
    assert output.strip().splitlines()[-1].strip() == "Interrupted.", output
    assert stop_reasons(folder) == ["cancelled"]


async def test_piped_lines_are_not_contributions(tmp_path: Path) -> None:
    async with SeatModel(latency=0.05) as model:
        folder = board_on(tmp_path, model)
        env = {**terminal_env(tmp_path), "PYTHONPATH": str(REPO)}
        done = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "bot.cli", "meeting", "--config", "sabha.yaml", TOPIC],
            input=f"{SAID}\n/wrap\n", capture_output=True, text=True, cwd=str(folder), env=env, timeout=300,
            check=False)
    assert done.returncode in (0, 1), done.stderr
    assert SEAT_LINE not in done.stdout + done.stderr
    assert all(SAID not in asked.text for asked in model.statements), "a piped line became a contribution"
    assert len(model.asked(3)) == SPECIALISTS, "a piped /wrap ended the meeting early"
    assert stop_reasons(folder) == ["completed"]
    assert os.path.exists(folder / "sessions" / "sabha.db")

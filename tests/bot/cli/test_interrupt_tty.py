"""Ctrl-C at any moment (issue 38): a real ``sabha run`` / ``chat`` / ``ask`` on a pseudo-terminal gets SIGINT
half a second and a second and a half after it starts (still importing, opening the state db, or already
running), or while ``ask`` waits on a model that holds the request: it ends with exit code 130 and one quiet
line, no traceback, no warning, no "coroutine ... was never awaited".

The moments are what is under test, so the test sleeps until them; everything else waits for a sign
(the model saw the request, the process ended)."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import pexpect
import pytest

from tests.support.fakes.echo_model import EchoModel
from tests.support.terminal import ended, make_board, problems, screen, spawn_sabha

INTERRUPTED = "Interrupted."


def use_model(board: Path, model: EchoModel) -> None:
    """The board's model: the fake at ``model`` (no retries: a held request is the one waited on)."""
    (board / "sabha.yaml").write_text(
        "workspace: ./workspace\ndata_dir: ./sessions\nserver:\n  port: 0\n"
        "llm:\n  model: openai:echo\n  retry: {retries: 0}\n"
        f"  providers:\n    openai:\n      base_url: {model.base_url}\n"
        "      api_key: ${OPENAI_API_KEY:-sk-test}\n", encoding="utf-8")


def interrupted_at(child: pexpect.spawn, moment: float) -> tuple[int | None, str]:
    """SIGINT ``moment`` seconds after ``child`` started, as Ctrl-C sends it; (exit code, what it printed)."""
    time.sleep(moment)  # the moment under test, not a wait for readiness
    child.kill(signal.SIGINT)
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus, screen(child)


def last_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else ""


@pytest.mark.parametrize("moment", [0.5, 1.5])
@pytest.mark.parametrize("command", [["run"], ["chat"], ["ask", "what is our runway?"]])
async def test_ctrl_c_early_exits_130_with_one_quiet_line(tmp_path: Path, command: list[str], moment: float) -> None:
    board = make_board(tmp_path)
    async with EchoModel() as model:
        model.hold()  # a question asked in time waits at the model: `ask` is interrupted, never answered
        use_model(board, model)
        with ended(spawn_sabha(board, tmp_path, *command)) as child:
            code, output = await asyncio.to_thread(interrupted_at, child, moment)
        model.release()
    assert code == 130, output
    assert not problems(output), output
    # run stopped once running ends with its own log line; every other moment says it in one line
    assert last_line(output) == INTERRUPTED or (command == ["run"] and last_line(output).endswith("sabha stopped")), \
        output


async def test_ctrl_c_while_ask_waits_on_the_model(tmp_path: Path) -> None:
    board = make_board(tmp_path)
    async with EchoModel() as model:
        model.hold()
        use_model(board, model)
        with ended(spawn_sabha(board, tmp_path, "ask", "what is our runway?")) as child:
            while model.in_flight < 1:  # the question reached the model and waits there
                assert child.isalive(), screen(child)
                await asyncio.sleep(0.05)
            code, output = await asyncio.to_thread(interrupted_at, child, 0)
        model.release()
    assert code == 130, output
    assert not problems(output), output
    assert last_line(output) == INTERRUPTED, output
    assert "ECHO" not in output

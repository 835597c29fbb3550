"""Issue 26, answers that stream in the terminal: a real piped ``sabha chat`` against a fake OpenAI
model that streams slowly (``llm.providers.openai.stream: true``). The answer's first words reach
stdout while the model is still writing, and the line ends up exactly the non-streamed answer."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from board.workspace.paths import copy_default_workspace
from tests.support.daemon import DAEMON_REPO
from tests.support.fakes.openai_api import FakeOpenAI

ANSWER = ("Pricing is a promise about value, so start from the outcome your customer buys, "
          "then test three price points with ten real conversations before you print a number anywhere.")
CHUNK_DELAY = 0.1


def chat_config(root: Path, model: FakeOpenAI) -> Path:
    copy_default_workspace(root / "workspace")
    path = root / "sabha.yaml"
    path.write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "llm:", "  model: openai:gpt-test",
        "  retry: {retries: 0}", "  providers:", "    openai:", "      api_key: test-key",
        f"      base_url: {model.base_url}", "      stream: true", "board:", "  slow_notice_s: 0", "",
    ]), encoding="utf-8")
    return path


async def piped_chat(config: Path, lines: str) -> list[tuple[float, bytes]]:
    """Run ``sabha chat`` with ``lines`` piped in; what it wrote to stdout, read by read, with when."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(DAEMON_REPO), XDG_DATA_HOME=str(config.parent / "xdg"))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli.main", "chat", "--config", str(config), cwd=str(config.parent), env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(lines.encode())
    await proc.stdin.drain()
    proc.stdin.close()
    reads: list[tuple[float, bytes]] = []
    while piece := await asyncio.wait_for(proc.stdout.read(65536), 60):
        reads.append((time.monotonic(), piece))
    await asyncio.wait_for(proc.wait(), 30)
    return reads


async def test_piped_chat_shows_the_first_words_while_the_model_is_still_writing(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script_text(ANSWER, chunk_delay=CHUNK_DELAY)  # 26 pieces: about 2.6 s of streaming
    reads = await piped_chat(chat_config(tmp_path, fake_openai), "how do I price my product?\n")
    output = b"".join(piece for _, piece in reads).decode()
    _label, _, text = output.partition(": ")
    assert text == ANSWER + "\n", output  # one line, exactly the answer
    first = next(t for t, piece in reads if b"Pricing" in piece)
    last = next(t for t, piece in reads if b"anywhere." in piece)
    assert last - first >= 1.0, "the first words came only with the end of the answer"
    assert b"anywhere" not in next(piece for _, piece in reads if b"Pricing" in piece)


async def test_typed_at_chat_grows_the_answer_in_place_then_prints_it_whole(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    import pexpect

    from tests.bot.cli.test_chat_tty import PROMPT, _expect, screen, spawn

    fake_openai.script_text(ANSWER, chunk_delay=0.15)  # about 4 s of streaming
    config = chat_config(tmp_path / "board", fake_openai)
    child = spawn(sys.executable, ["-m", "bot.cli.main", "chat", "--config", str(config)], config.parent, tmp_path)
    try:
        await _expect(child, PROMPT)
        child.send("how do I price my product?\r")
        await _expect(child, "promise")  # part of the answer shows while it is written (redrawn in place)...
        assert fake_openai.requests and "anywhere." not in screen(child), screen(child)
        await _expect(child, "anywhere.")  # ... then all of it
        await _expect(child, PROMPT)
        child.send("/quit\r")
        await _expect(child, pexpect.EOF)
    finally:
        child.close()
    output = screen(child)
    assert "Traceback" not in output and "Error" not in output

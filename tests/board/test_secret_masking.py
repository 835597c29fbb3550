"""Secrets are masked before anything is written anywhere (issue 22, item 7).

A provider that answers 401 with a body echoing the API key (as OpenAI's "Incorrect API key
provided: ..." does) on a real ``sabha run``: the key must not reach the transcript JSONL, the
state db file (``llm_calls.error`` or any other row), the daemon's log or ``sabha sessions show
--json``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.daemon import DAEMON_REPO, SabhaProcess, write_config
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, TOKEN, eventually

API_KEY = "sk-proj-Zq8xV3nT1cLwP0eR7uYb2KfH9sJdM4gA"


def _occurrences(root: Path) -> dict[str, int]:
    """How often the key is in each kind of file under ``root`` (the db counted with its WAL)."""
    counts = {"transcripts": 0, "db": 0}
    needle = API_KEY.encode()
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        if path.suffix == ".jsonl":
            counts["transcripts"] += path.read_bytes().count(needle)
        elif "sabha.db" in path.name:
            counts["db"] += path.read_bytes().count(needle)
    return counts


def _cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(DAEMON_REPO), OPENAI_API_KEY=API_KEY, TELEGRAM_BOT_TOKEN=TOKEN)
    return subprocess.run([sys.executable, "-m", "bot.cli.main", *args, "--config", str(config)],
                          capture_output=True, text=True, env=env, timeout=60, cwd=str(config.parent))


async def test_a_401_that_echoes_the_api_key_is_masked_in_every_store(
        tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI) -> None:
    config = write_config(tmp_path, fake, fake_openai)  # type: ignore[arg-type]
    text = config.read_text(encoding="utf-8").replace("api_key: test-key", "api_key: ${OPENAI_API_KEY}")
    config.write_text(text, encoding="utf-8")
    echoed = f"Incorrect API key provided: {API_KEY}. You can find your API key at https://platform.openai.com."
    for _ in range(6):  # the turn and anything it falls back to
        fake_openai.script_error(401, "invalid_api_key", echoed)
    sabha = SabhaProcess(config, env={"TELEGRAM_BOT_TOKEN": TOKEN, "OPENAI_API_KEY": API_KEY})
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "Q1 what is our runway?", is_forum=False, chat_type="private")
        await eventually(lambda: len(fake.sent_to(OWNER)) >= 1, "an answer", timeout=30)
        assert fake_openai.requests[0].headers.get("Authorization") == f"Bearer {API_KEY}"  # the key was used
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()
    found = _occurrences(tmp_path / "sessions")
    shown = _cli(config, "sessions", "show", "main", "--json")
    assert shown.returncode == 0, shown.stderr
    counts = {**found, "log": sabha.log.count(API_KEY), "sessions show --json": shown.stdout.count(API_KEY),
              "chat": sum(m.text.count(API_KEY) for m in fake.sent_to(OWNER))}
    print(f"\nthe API key's occurrences after a 401 echoing it: {counts}")
    assert "401" in shown.stdout or "Incorrect API key" in shown.stdout, shown.stdout  # the error is kept, masked
    assert counts == {"transcripts": 0, "db": 0, "log": 0, "sessions show --json": 0, "chat": 0}

    # a transcript written before the fix still holds the key: the CLI masks what it prints
    [transcript] = (tmp_path / "sessions").glob("*.jsonl")
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "message", "role": "assistant", "text": f"old error: {API_KEY}"}) + "\n")
    old = _cli(config, "sessions", "show", "main", "--json")
    assert old.returncode == 0 and "old error: ***" in old.stdout and API_KEY not in old.stdout, old.stdout

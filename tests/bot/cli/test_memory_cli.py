"""Memory that writes itself through the real terminal (issue 26): ``sabha chat`` piped and ``sabha ask`` as
subprocesses on a board made by ``sabha init`` (the offline model), then ``sabha memory list|forget|edit``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from board.storage import Dialect
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, eventually

SABHA = [sys.executable, "-m", "bot.cli.main"]
REPO = Path(__file__).resolve().parents[3]  # this checkout's code, not an installed one


@pytest.fixture(autouse=True)
def _private_personal_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def run(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(SABHA + args, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=90, env=env)


@pytest.fixture
def home(tmp_path: Path, backend: Dialect, request: pytest.FixtureRequest) -> Path:
    """A board made by ``sabha init``; its state on the test's backend (a fresh PostgreSQL database, which
    ``sabha`` migrates itself, when the test runs ``[postgres]``)."""
    result = run(["init", str(tmp_path / "proj")], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    if backend is Dialect.POSTGRES:
        url = request.getfixturevalue("pg_url")
        with open(tmp_path / "proj" / "sabha.yaml", "a", encoding="utf-8") as fh:
            fh.write(f"\nstate:\n  url: {url}\n")
    return tmp_path / "proj"


def facts(home: Path) -> list[dict[str, str]]:
    listed = run(["memory", "list", "--json"], cwd=home)
    assert listed.returncode == 0, listed.stderr
    return list(json.loads(listed.stdout))


@pytest.mark.backends
def test_said_in_chat_then_recalled_listed_edited_and_forgotten(home: Path) -> None:
    chat = run(["chat"], cwd=home, stdin="Hi, I'm based in Pune.\nPlease call me Asha.\n"
                                            "If I were based in Delhi, what would change?\n"
                                            "What do you remember about me?\n")
    assert chat.returncode == 0, chat.stderr
    recalled = chat.stdout.split("What the board remembers about you:", 1)
    assert len(recalled) == 2, chat.stdout
    assert "location: Pune" in recalled[1] and "name: Asha" in recalled[1] and "Delhi" not in recalled[1]

    kept = facts(home)
    assert sorted((f["role"], f["key"], f["value"], f["source"]) for f in kept) == [
        ("*", "location", "Pune", "heard"), ("*", "name", "Asha", "heard")]
    user = kept[0]["user"]
    assert user.startswith("console:") and all(f["source_entry"] and f["source_session"] == "main" for f in kept)
    table = run(["memory", "list", "--user", user, "--sources"], cwd=home)
    assert table.returncode == 0 and "heard, " in table.stdout and "FROM" in table.stdout.splitlines()[0]

    # a later process: the correction replaces, and the next turn's answer comes from the store
    assert run(["ask", "Actually, I moved to Mumbai."], cwd=home).returncode == 0
    asked = run(["ask", "what do you remember about me"], cwd=home)
    assert asked.returncode == 0 and "location: Mumbai" in asked.stdout and "Pune" not in asked.stdout

    edited = run(["memory", "edit", user, "name", "Asha Rao"], cwd=home)
    assert edited.returncode == 0 and edited.stdout.strip() == f"edited 1 fact(s) about {user}"
    secret = run(["memory", "edit", user, "name", "4111 1111 1111 1111"], cwd=home)
    assert secret.returncode == 2 and "secret" in secret.stderr and "Traceback" not in secret.stderr
    missing = run(["memory", "edit", user, "nickname", "Ash"], cwd=home)
    assert missing.returncode == 1 and "nothing to edit" in missing.stdout
    assert {(f["key"], f["value"], f["source"]) for f in facts(home)} == {
        ("location", "Mumbai", "heard"), ("name", "Asha Rao", "owner")}

    gone = run(["memory", "forget", user, "location"], cwd=home)
    assert gone.returncode == 0 and gone.stdout.strip() == f"forgot 1 fact(s) about {user}"
    assert [f["key"] for f in facts(home)] == ["name"]
    everything = run(["ask", "forget everything"], cwd=home)
    assert everything.returncode == 0 and "forgot everything" in everything.stdout
    assert facts(home) == []


@pytest.mark.backends
def test_secrets_said_in_chat_are_never_stored(home: Path) -> None:
    chat = run(["chat"], cwd=home, stdin="My password is hunter22.\nMy PAN is ABCDE1234F.\n"
                                            "My card number is 4111 1111 1111 1111.\nI work at Zeta Foods.\n")
    assert chat.returncode == 0, chat.stderr
    kept = facts(home)
    assert [(f["key"], f["value"]) for f in kept] == [("employer", "Zeta Foods")]


async def test_a_real_daemon_remembers_what_a_telegram_user_said(tmp_path: Path, fake: FakeTelegramAPI) -> None:
    sabha = SabhaProcess(write_config(tmp_path, fake, None))  # the offline model: its rules extract
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "Hi, I'm based in Pune. Please call me Asha.")
        await eventually(lambda: len(fake.sent_to(OWNER)) == 1, "answer 1", timeout=30)
        fake.push_text(OWNER, OWNER, "If I were based in Delhi, what would change?")
        await eventually(lambda: len(fake.sent_to(OWNER)) == 2, "answer 2", timeout=30)
        fake.push_text(OWNER, OWNER, "What do you remember about me?")
        await eventually(lambda: len(fake.sent_to(OWNER)) == 3, "answer 3", timeout=30)
        fake.push_text(OWNER, OWNER, "forget that")
        await eventually(lambda: len(fake.sent_to(OWNER)) == 4, "answer 4", timeout=30)
    finally:
        await sabha.close()
    sent = [m.text for m in fake.sent_to(OWNER)]
    assert "location: Pune" in sent[2] and "name: Asha" in sent[2] and "Delhi" not in sent[2], sent[2]
    assert sent[3].startswith("Forgotten: ") or "Forgotten: " in sent[3], sent[3]

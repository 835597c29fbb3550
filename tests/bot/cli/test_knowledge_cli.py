"""``sabha kb`` and ``sabha memory`` as the owner runs them: real processes on a board made by ``sabha init``,
and the offline model's text tool protocol saving a fact through a real ``sabha ask``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from board.storage import StateURL

SABHA = [sys.executable, "-m", "bot.cli.main"]


@pytest.fixture(autouse=True)
def _private_personal_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3])  # this checkout's code, not an installed one
    return subprocess.run(SABHA + args, cwd=cwd, capture_output=True, text=True, timeout=60, env=env)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    result = run(["init", str(tmp_path / "proj")], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "proj"


def use_state(home: Path, state_url: StateURL | None) -> None:
    """Point the board made by ``sabha init`` at the test's state store (PostgreSQL; None: its SQLite file)."""
    if state_url is not None:
        with (home / "sabha.yaml").open("a", encoding="utf-8") as config:
            config.write(f"\nstate:\n  url: {state_url}\n")


@pytest.mark.backends
def test_kb_add_search_list_with_role_scopes(home: Path, tmp_path: Path, state_url: StateURL | None) -> None:
    use_state(home, state_url)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pricing.md").write_text("# Pricing\n\n## Enterprise\n\nSeats cost 40 USD a month, billed yearly.\n",
                                     encoding="utf-8")
    (docs / "notes.txt").write_text("The offsite is in Goa.\n", encoding="utf-8")
    (tmp_path / "runway.md").write_text("# Runway\n\nCash lasts 14 months at the current burn.\n", encoding="utf-8")

    added = run(["kb", "add", str(docs)], cwd=home)
    assert added.returncode == 0, added.stderr
    assert "added knowledge/shared/notes.txt (1 chunk; every role reads it)" in added.stdout
    assert "added knowledge/shared/pricing.md" in added.stdout
    private = run(["kb", "add", str(tmp_path / "runway.md"), "--role", "finance"], cwd=home)
    assert "only finance reads it" in private.stdout and (home / "workspace/knowledge/finance/runway.md").is_file()

    found = run(["kb", "search", "enterprise", "seat", "price"], cwd=home)
    assert found.returncode == 0 and found.stdout.startswith("1. knowledge/shared/pricing.md § Pricing > Enterprise")
    assert "Seats cost 40 USD" in found.stdout
    assert "finance/runway.md" in run(["kb", "search", "runway", "burn"], cwd=home).stdout  # the owner sees all
    hidden = run(["kb", "search", "runway", "burn", "--role", "research"], cwd=home)
    assert "nothing in the research role matches" in hidden.stdout
    as_json = json.loads(run(["kb", "search", "runway", "--role", "finance", "--json"], cwd=home).stdout)
    assert [h["source"] for h in as_json] == ["knowledge/finance/runway.md"] and as_json[0]["score"] > 0

    listing = run(["kb", "list"], cwd=home)
    assert listing.returncode == 0
    assert listing.stdout.splitlines()[0].split() == ["DOCUMENT", "SCOPE", "CHUNKS", "SIZE", "INDEXED"]
    assert "3 document(s), 3 chunk(s)" in listing.stdout
    assert [d["path"] for d in json.loads(run(["kb", "list", "--role", "research", "--json"], cwd=home).stdout)] \
        == ["knowledge/shared/notes.txt", "knowledge/shared/pricing.md"]

    (docs / "pricing.md").write_text("# Pricing\n\nSeats now cost 45 USD.\n", encoding="utf-8")
    clash = run(["kb", "add", str(docs / "pricing.md")], cwd=home)
    assert clash.returncode == 1 and "--force" in clash.stderr
    assert run(["kb", "add", "--force", str(docs / "pricing.md")], cwd=home).returncode == 0
    assert "45 USD" in run(["kb", "search", "seats"], cwd=home).stdout

    rebuilt = run(["kb", "reindex"], cwd=home)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "3 added" in rebuilt.stdout and "3 document(s)" in run(["kb", "list"], cwd=home).stdout
    index_file = home / "sessions" / "knowledge.db"
    if state_url is None:
        assert index_file.is_file() and str(index_file) in rebuilt.stdout
    else:  # in the state database, which every replica shares; no file of its own
        assert not index_file.exists() and "knowledge_documents" in rebuilt.stdout


def test_kb_explains_bad_input(home: Path, tmp_path: Path) -> None:
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    bad = run(["kb", "add", str(tmp_path / "image.png")], cwd=home)
    assert bad.returncode == 1 and "only .md, .markdown, .txt, .text, .pdf files are indexed" in bad.stderr
    missing = run(["kb", "add", str(tmp_path / "nope.md")], cwd=home)
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    slug = run(["kb", "search", "x", "--role", "Not A Role"], cwd=home)
    assert slug.returncode == 2 and "is not a role slug" in slug.stderr
    (home / "workspace/knowledge/shared").mkdir(parents=True)
    (home / "workspace/knowledge/shared/latin1.md").write_bytes(b"caf\xe9")
    listing = run(["kb", "list"], cwd=home)
    assert listing.returncode == 1 and "not indexed: knowledge/shared/latin1.md" in listing.stdout
    assert "not UTF-8" in listing.stdout
    config = home / "sabha.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "\nknowledge:\n  enabled: false\n", encoding="utf-8")
    off = run(["kb", "list"], cwd=home)
    assert off.returncode == 2 and "knowledge.enabled: false" in off.stderr


def test_memory_list_and_forget_a_fact_saved_in_chat(home: Path) -> None:
    saved = run(["ask", '[TOOL: remember ARG: {"key": "home city", "value": "Pune"}]'], cwd=home)
    assert saved.returncode == 0, saved.stderr
    facts = json.loads(run(["memory", "list", "--json"], cwd=home).stdout)
    assert [(f["role"], f["key"], f["value"]) for f in facts] == [("general", "home city", "Pune")]
    user = facts[0]["user"]
    assert user.startswith("console:")
    table = run(["memory", "list", "--user", user], cwd=home)
    assert table.stdout.splitlines()[0].split() == ["USER", "ROLE", "KEY", "VALUE", "UPDATED"]
    assert "1 fact(s); each role sees only what it was told" in table.stdout
    answered = run(["ask", "what do you know about me?"], cwd=home)
    assert answered.returncode == 0
    gone = run(["memory", "forget", user, "home", "city"], cwd=home)
    assert gone.returncode == 0 and gone.stdout.strip() == f"forgot 1 fact(s) about {user}"
    again = run(["memory", "forget", user, "home city"], cwd=home)
    assert again.returncode == 1 and "nothing to forget" in again.stdout
    assert run(["memory", "list"], cwd=home).stdout.strip() == "nothing remembered"

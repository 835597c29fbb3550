"""``sabha kb add`` checks a document before it copies it (issue 22, item 9).

Seen: ``kb add`` followed a symlink (to ``/etc/shadow``) and indexed its target into the shared
knowledge base, readable by every role, though the daemon's watcher refuses the same link; a
33 MB file was copied into the workspace and then refused; a FIFO and ``/dev/zero`` were
reported as "does not exist". Here the real CLI (``sabha init`` then ``sabha kb add``) gets
each of them: each is refused with its real reason and nothing is copied.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SABHA = [sys.executable, "-m", "bot.cli.main"]
SECRET = "OWNER-PRIVATE-MARKER"


@pytest.fixture(autouse=True)
def _private_personal_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    env["PYTHONPATH"] = str(REPO)  # this checkout's code, not an installed one
    return subprocess.run(SABHA + args, cwd=cwd, capture_output=True, text=True, timeout=60, env=env)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    result = run(["init", str(tmp_path / "proj")], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "proj"


def knowledge_files(home: Path) -> list[str]:
    folder = home / "workspace" / "knowledge"
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir())


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A private file of the owner's, outside the workspace."""
    path = tmp_path / "private" / "diary.md"
    path.parent.mkdir()
    path.write_text(f"# Diary\n\n{SECRET}: the owner's private notes.\n", encoding="utf-8")
    return path


def refused(home: Path, source: Path | str, *reason: str) -> str:
    before = knowledge_files(home)
    result = run(["kb", "add", str(source)], cwd=home)
    print(f"\nsabha kb add {source}: exit {result.returncode}: {result.stderr.strip()}")
    assert result.returncode != 0, result.stdout
    assert "does not exist" not in result.stderr
    for words in reason:
        assert words in result.stderr, result.stderr
    assert knowledge_files(home) == before, "something was copied into the workspace"
    return result.stderr


def test_kb_add_refuses_a_symlink_and_indexes_nothing(home: Path, tmp_path: Path, outside: Path) -> None:
    link = tmp_path / "docs" / "notes.md"
    link.parent.mkdir()
    link.symlink_to(outside)
    refused(home, link, "is a symlink (to ", "give the file's own path")
    assert json.loads(run(["kb", "search", SECRET, "--json"], cwd=home).stdout) == []
    # the watcher's check, for the same link put into the knowledge folder by hand: refused too
    (home / "workspace/knowledge/shared").mkdir(parents=True, exist_ok=True)
    (home / "workspace/knowledge/shared/notes.md").symlink_to(outside)
    listing = run(["kb", "list"], cwd=home)
    assert "not indexed: knowledge/shared/notes.md" in listing.stdout and "outside the workspace" in listing.stdout
    assert json.loads(run(["kb", "search", SECRET, "--json"], cwd=home).stdout) == []


def test_kb_add_refuses_a_too_large_file_before_copying_it(home: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    with big.open("wb") as fh:
        fh.truncate(33 * 1024 * 1024)
    refused(home, big, "34603008 bytes", "knowledge.max_file_bytes")


def test_kb_add_refuses_a_fifo_with_its_real_reason(home: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    refused(home, fifo, "a FIFO, not a regular file")


def test_kb_add_refuses_dev_zero_with_its_real_reason(home: Path) -> None:
    refused(home, "/dev/zero", "a device, not a regular file")


def test_kb_add_of_a_plain_file_still_copies_and_indexes_it(home: Path, outside: Path) -> None:
    added = run(["kb", "add", str(outside)], cwd=home)
    assert added.returncode == 0, added.stderr
    assert knowledge_files(home) == ["shared/diary.md"]
    assert SECRET in run(["kb", "search", SECRET], cwd=home).stdout

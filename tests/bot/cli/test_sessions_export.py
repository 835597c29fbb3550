"""``sabha sessions`` through real ``sabha`` processes, with the state on SQLite and on PostgreSQL.

The same conversation (``sabha ask`` x3, a reset, one more ask) runs on a board with the SQLite state
and on one with ``state.url`` pointing at the test's PostgreSQL; ``sabha sessions list / show / export``
work on both, and the exported files are the SQLite mode's own transcript files byte for byte, and the
same bytes from PostgreSQL once what differs between two runs (session ids, times, entry ids, latencies)
is masked.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bot.cli.main import main

SABHA = [sys.executable, "-m", "bot.cli.main"]
REPO = Path(__file__).resolve().parents[3]

#: What two runs of one conversation cannot share: ids, times and measured durations.
_VARYING = [
    (re.compile(rb"\d{8}T\d{6}-([a-z_.@+-]+)-[0-9a-f]{6}"), rb"SESSION-\1"),
    (re.compile(rb'"(ts|created|id|first_kept)": ?"[^"]*"'), rb'"\1":"X"'),
    (re.compile(rb'"(latency_ms|ttft_ms)": ?[0-9.e+-]+'), rb'"\1":0'),
]


def masked(data: bytes) -> bytes:
    for pattern, replacement in _VARYING:
        data = pattern.sub(replacement, data)
    return data


def sabha(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SABHA_", "PG"))}
    env.update(PYTHONPATH=str(REPO), XDG_DATA_HOME=str(home.parent / "xdg"))  # this checkout's code
    result = subprocess.run(SABHA + args, cwd=home, capture_output=True, text=True, timeout=60, env=env)
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.fixture(autouse=True)
def _private_personal_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


class Cli:
    """``sabha`` in this process (the same entry point), its output captured."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys

    def __call__(self, args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
        self.capsys.readouterr()
        code = main([*args, "--config", str(home / "sabha.yaml")])
        out, err = self.capsys.readouterr()
        assert "Traceback" not in err, err
        return subprocess.CompletedProcess(args, code, out, err)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(capsys)


def make_home(tmp_path: Path, name: str, state_url: str | None) -> Path:
    assert main(["init", str(tmp_path / name)]) == 0
    home = tmp_path / name
    if state_url is not None:
        with open(home / "sabha.yaml", "a", encoding="utf-8") as fh:
            fh.write(f"\nstate:\n  url: {state_url}\n")
    return home


def converse(home: Path) -> None:
    for args in (["ask", "--role", "finance", "what is our runway?"],
                 ["ask", "--role", "finance", "and after the raise?"], ["ask", "hello board"],
                 ["sessions", "reset", "finance"], ["ask", "--role", "finance", "starting over: costs?"]):
        result = sabha(args, home)
        assert result.returncode == 0, (args, result.stderr)


def exported(cli: Cli, home: Path, folder: Path) -> dict[str, bytes]:
    result = cli(["sessions", "export", str(folder)], home)
    assert result.returncode == 0, result.stderr
    assert f"exported 3 session(s) to {folder}" in result.stdout
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.jsonl"))}


def by_content(files: dict[str, bytes]) -> list[bytes]:
    return sorted(masked(data) for data in files.values())


def test_the_same_conversation_exports_the_same_files_on_sqlite_and_postgres(tmp_path: Path, pg_url: str,
                                                                             cli: Cli) -> None:
    lite, pg = make_home(tmp_path, "lite", None), make_home(tmp_path, "pg", pg_url)
    with ThreadPoolExecutor(2) as pool:  # real `sabha ask` processes, the two boards side by side
        list(pool.map(converse, (lite, pg)))
    assert not list((pg / "sessions").glob("*.jsonl")), "on PostgreSQL the transcripts are rows, not files"

    lite_files = exported(cli, lite, tmp_path / "out-lite")
    own = {p.name: p.read_bytes() for p in (lite / "sessions").glob("*.jsonl")}
    assert lite_files == own  # SQLite mode exports its own files as they are
    pg_files = exported(cli, pg, tmp_path / "out-pg")
    assert len(pg_files) == 3 and all(name.endswith(".jsonl") for name in pg_files)
    assert by_content(pg_files) == by_content(lite_files)
    assert all(data.endswith(b"\n") and data.startswith(b'{"type": "session"') for data in pg_files.values())
    assert sum(data.count(b"\n") for data in pg_files.values()) == 3 + 2 * 4  # headers + 4 turns of 2 lines

    for home in (lite, pg):
        reads_its_sessions(cli, home)
    assert "transcript_lines" in cli(["sessions", "show", "main"], pg).stdout.splitlines()[0]


def reads_its_sessions(cli: Cli, home: Path) -> None:
    """list, show and show --json read the transcripts wherever they are."""
    listed = cli(["sessions", "list", "--all"], home).stdout
    assert listed.count("board:finance") == 2 and "main" in listed and "LAST ACTIVE" in listed
    assert " - " not in listed  # every session has a last-active time
    shown = cli(["sessions", "show", "finance"], home)
    assert shown.returncode == 0 and "starting over: costs?" in shown.stdout
    assert "what is our runway?" not in shown.stdout  # archived by the reset
    live = shown.stdout.split()[3]  # "# board:finance  session <id>  (where)"
    archived = next(sid for sid in re.findall(r"\d{8}T\d{6}-finance-[0-9a-f]{6}", listed) if sid != live)
    old = cli(["sessions", "show", archived], home).stdout
    assert "what is our runway?" in old and "and after the raise?" in old
    last = cli(["sessions", "show", "finance", "--last", "1", "--json"], home).stdout.splitlines()
    assert len(last) == 1 and json.loads(last[0])["role"] == "assistant"


@pytest.mark.parametrize(("where", "expected"), [("taken", "is a file, not a folder"),
                                                   ("taken/out", "cannot make the folder")])
def test_export_to_a_place_that_cannot_be_written_is_a_clear_error(tmp_path: Path, where: str, expected: str,
                                                                    cli: Cli) -> None:
    home = make_home(tmp_path, "b", None)
    assert cli(["ask", "hello"], home).returncode == 0
    (tmp_path / "taken").write_text("x", encoding="utf-8")
    result = cli(["sessions", "export", str(tmp_path / where)], home)
    assert result.returncode == 2 and expected in result.stderr and "name a folder" in result.stderr, result.stderr


def test_export_with_nothing_said_yet(tmp_path: Path, cli: Cli) -> None:
    home = make_home(tmp_path, "b", None)
    result = cli(["sessions", "export", str(tmp_path / "out")], home)
    assert result.returncode == 0 and "nothing exported" in result.stdout
    assert (tmp_path / "out").is_dir()

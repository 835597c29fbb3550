"""Files the prompt reads are checked on every load (issue 10 item 2).

Seen: a soul file swapped for a symlink while the daemon ran escaped the workspace (the
path was checked only at first load); /etc/passwd, ../sabha.yaml or /proc/self/environ
became finance's system prompt; USER.md and AGENTS.md were never checked. Here a live
Board on the scripted model is edited under its feet; the next turn's system prompt is
what the scripted model recorded.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from board.app import Board
from board.envelope import Envelope
from tests.support.board import board_with
from tests.support.fakes.scripted_model import ScriptedModel

SECRET = "TELEGRAM_TOKEN=123456:fake-secret-do-not-send"
MARKER = {
    "board/finance.soul.md": "FINANCE-SOUL-MARKER",
    "USER.md": "USER-MD-MARKER",
    "AGENTS.md": "AGENTS-MD-MARKER",
}


def ask(text: str, role: str | None = None) -> Envelope:
    return Envelope(channel="console", text=text, sender="owner", role_hint=role, is_owner=True)


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A file outside the workspace holding a fake secret."""
    path = tmp_path / "outside" / "sabha.yaml"
    path.parent.mkdir()
    path.write_text(f"{SECRET}\n# {'x' * 40}\n", encoding="utf-8")
    return path


@pytest.fixture
async def live(workspace: Path, data_dir: Path) -> AsyncIterator[tuple[Board, ScriptedModel]]:
    for name, marker in MARKER.items():
        path = workspace / name
        path.write_text(path.read_text(encoding="utf-8") + f"\n{marker}\n", encoding="utf-8")
    model = ScriptedModel()
    board = await board_with(workspace, data_dir, model)
    try:
        yield board, model
    finally:
        await board.close()


async def turn(board: Board, model: ScriptedModel) -> str:
    """One finance turn; returns the system prompt and the per-turn context the model was sent."""
    await board.handle(ask("how are the books?", role="finance"))
    request = model.requests[-1].request
    return request.system_text + "\n\n" + request.context_text


def errors_naming(caplog: pytest.LogCaptureFixture, name: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and name in r.getMessage()]


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def swap_for_symlink(path: Path, target: Path | str) -> None:
    """Replace ``path`` atomically by a symlink to ``target`` (what an editor or attacker does)."""
    tmp = path.with_name(path.name + ".swap")
    os.symlink(target, tmp)
    os.replace(tmp, path)


@pytest.mark.parametrize("name", list(MARKER))
async def test_file_swapped_for_symlink_outside_keeps_last_good(
    live: tuple[Board, ScriptedModel], workspace: Path, secret_file: Path, name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    board, model = live
    assert MARKER[name] in await turn(board, model)
    swap_for_symlink(workspace / name, secret_file)
    with caplog.at_level(logging.INFO):
        for _ in range(3):
            system = await turn(board, model)
            assert SECRET not in system
            assert MARKER[name] in system  # the last good version is still used
    assert len(errors_naming(caplog, name)) == 1, [r.getMessage() for r in caplog.records]
    assert "outside the workspace" in errors_naming(caplog, name)[0]
    if name.endswith(".soul.md"):
        souls = (await board.handle(ask("/souls"))).text
        finance = next(line for line in souls.splitlines() if line.startswith("finance:"))
        assert "ERROR" in finance and "outside the workspace" in finance


async def test_soul_symlink_to_relative_path_outside(
    live: tuple[Board, ScriptedModel], workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    board, model = live
    (workspace.parent / "sabha.yaml").write_text(f"{SECRET}\n", encoding="utf-8")
    await turn(board, model)
    swap_for_symlink(workspace / "board/finance.soul.md", "../../sabha.yaml")
    with caplog.at_level(logging.INFO):
        system = await turn(board, model)
    assert SECRET not in system and MARKER["board/finance.soul.md"] in system
    assert len(errors_naming(caplog, "finance.soul.md")) == 1


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
async def test_soul_symlink_to_proc_environ(
    live: tuple[Board, ScriptedModel], workspace: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    board, model = live
    await turn(board, model)
    swap_for_symlink(workspace / "board/finance.soul.md", "/proc/self/environ")
    with caplog.at_level(logging.INFO):
        system = await turn(board, model)
    assert "PATH=" not in system and MARKER["board/finance.soul.md"] in system
    assert len(errors_naming(caplog, "finance.soul.md")) == 1


async def test_template_swapped_for_symlink_outside(
    live: tuple[Board, ScriptedModel], workspace: Path, secret_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    board, model = live
    write(secret_file, f"{SECRET}\n{{{{ user_md }}}}\n")
    await turn(board, model)
    swap_for_symlink(workspace / "templates/dynamic.md.j2", secret_file)
    with caplog.at_level(logging.INFO):
        for _ in range(2):
            system = await turn(board, model)
            assert SECRET not in system
            assert MARKER["USER.md"] in system  # the shipped template still renders the block
    assert len(errors_naming(caplog, "dynamic.md.j2")) == 1


async def test_template_include_outside_is_refused(
    live: tuple[Board, ScriptedModel], workspace: Path, secret_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    board, model = live
    os.symlink(secret_file, workspace / "templates/extra.md.j2")
    path = workspace / "templates/dynamic.md.j2"
    path.write_text(path.read_text(encoding="utf-8") + '\n{% include "extra.md.j2" %}\n', encoding="utf-8")
    with caplog.at_level(logging.INFO):
        for _ in range(2):
            system = await turn(board, model)
            assert SECRET not in system
    assert len(errors_naming(caplog, "extra.md.j2")) == 1


@pytest.mark.parametrize("name", ["board/finance.soul.md", "USER.md"])
async def test_fifo_is_refused(
    live: tuple[Board, ScriptedModel], workspace: Path, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    board, model = live
    await turn(board, model)
    fifo = workspace / "pipe"
    os.mkfifo(fifo)
    os.replace(fifo, workspace / name)
    with caplog.at_level(logging.INFO):
        system = await turn(board, model)  # must not hang on open()
        system = await turn(board, model)
    assert MARKER[name] in system
    errors = errors_naming(caplog, Path(name).name)
    assert len(errors) == 1 and "not a regular file" in errors[0]


@pytest.mark.parametrize("name", ["board/finance.soul.md", "USER.md", "AGENTS.md"])
async def test_oversized_file_is_refused(
    live: tuple[Board, ScriptedModel], workspace: Path, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    board, model = live
    await turn(board, model)
    (workspace / name).write_text("# big\n" + "y" * (2 * 1024 * 1024), encoding="utf-8")
    with caplog.at_level(logging.INFO):
        system = await turn(board, model)
        system = await turn(board, model)
    assert MARKER[name] in system and "yyyy" not in system
    errors = errors_naming(caplog, Path(name).name)
    assert len(errors) == 1 and "limit" in errors[0]


async def test_directory_in_place_of_a_file_is_refused(
    live: tuple[Board, ScriptedModel], workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    board, model = live
    await turn(board, model)
    (workspace / "AGENTS.md").unlink()
    (workspace / "AGENTS.md").mkdir()
    with caplog.at_level(logging.INFO):
        system = await turn(board, model)
        system = await turn(board, model)
    assert MARKER["AGENTS.md"] in system
    assert len(errors_naming(caplog, "AGENTS.md")) == 1


@pytest.mark.parametrize("name", list(MARKER))
async def test_symlink_inside_the_workspace_still_works(
    live: tuple[Board, ScriptedModel], workspace: Path, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    board, model = live
    await turn(board, model)
    real = workspace / "shared" / "real.md"
    real.parent.mkdir()
    real.write_text(f"# Linked\n\nLINKED-{name}-TEXT, a voice of its own.\n", encoding="utf-8")
    swap_for_symlink(workspace / name, real)
    with caplog.at_level(logging.INFO):
        system = await turn(board, model)
    assert f"LINKED-{name}-TEXT" in system
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]

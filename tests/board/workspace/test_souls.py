"""Soul files: parsing, hot reload on the next turn, last-good on broken edits."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from board.app import Board
from board.envelope import Envelope
from board.roles import RoleOverride, RosterSpec
from board.workspace.files import FileProblem
from board.workspace.paths import PathEscapeError
from board.workspace.souls import SoulStore, parse_soul


def ask(text: str, role: str | None = None) -> Envelope:
    return Envelope(channel="console", text=text, sender="owner", role_hint=role, is_owner=True)


FINANCE_V2 = """---
name: Moneybags
emoji: 🤑
---
# Moneybags

You count every rupee twice and trust nothing that has no invoice. You speak in short sums.

## Questions you always ask
- Where is the invoice?
"""


def test_parse_front_matter_and_version() -> None:
    soul = parse_soul(FINANCE_V2.encode())
    assert soul.meta.name == "Moneybags"
    assert soul.meta.emoji == "🤑"
    assert soul.body.startswith("# Moneybags")
    assert len(soul.version) == 12
    assert parse_soul(FINANCE_V2.encode()).version == soul.version
    assert parse_soul((FINANCE_V2 + "x").encode()).version != soul.version


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "is empty"),
        (b"   \n\n", "is empty"),
        (b"\xff\xfe not utf8 \xc3", "not UTF-8"),
        (b"x" * (64 * 1024 + 1), "over the 65536-byte limit"),
        (b"---\nname: [unclosed\n---\nbody\n", "not valid YAML"),
        (b"---\nname: A\n", "no closing '---'"),
        (b"---\n- a\n- b\n---\nbody\n", "must be a YAML mapping"),
        (b"---\nemojii: x\n---\nbody\n", "bad front matter"),
        (b"---\nname: A\n---\n\n", "no personality text"),
    ],
)
def test_broken_souls_are_rejected_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(FileProblem, match=reason):
        parse_soul(data)


async def test_edit_takes_effect_on_next_turn(board: Board, workspace: Path) -> None:
    first = await board.handle(ask("@finance should we hire?"))
    assert first.name == "Finance"
    assert "cost, a return and a runway impact" in first.text
    (workspace / "board" / "finance.soul.md").write_text(FINANCE_V2, encoding="utf-8")
    second = await board.handle(ask("@finance should we hire?"))
    assert second.name == "Moneybags" and second.emoji == "🤑"
    assert "I count every rupee twice" in second.text
    assert "Where is the invoice?" in second.text


async def test_atomic_replace_is_seen(board: Board, workspace: Path) -> None:
    await board.handle(ask("@finance hi"))
    target = workspace / "board" / "finance.soul.md"
    tmp = target.with_suffix(".tmp")
    tmp.write_text(FINANCE_V2, encoding="utf-8")
    os.replace(tmp, target)  # what editors do on save
    reply = await board.handle(ask("@finance hi"))
    assert reply.name == "Moneybags"


async def test_broken_edit_keeps_last_good_and_logs_once(
    board: Board, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    target = workspace / "board" / "finance.soul.md"
    target.write_text(FINANCE_V2, encoding="utf-8")
    assert (await board.handle(ask("@finance hi"))).name == "Moneybags"
    target.write_bytes(b"---\nname: [broken\n---\ntext\n")
    with caplog.at_level(logging.ERROR, logger="sabha.files"):
        for _ in range(3):
            reply = await board.handle(ask("@finance hi"))
            assert reply.name == "Moneybags"
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert str(target) in errors[0].getMessage()
    assert "keeping the last good version" in errors[0].getMessage()
    status = {s.role: s for s in board.parts.souls.status()}["finance"]
    assert status.error and "not valid YAML" in status.error
    assert status.version == parse_soul(FINANCE_V2.encode()).version


async def test_delete_falls_back_to_shipped_soul(board: Board, workspace: Path) -> None:
    target = workspace / "board" / "finance.soul.md"
    target.write_text(FINANCE_V2, encoding="utf-8")
    assert (await board.handle(ask("@finance hi"))).name == "Moneybags"
    target.unlink()
    reply = await board.handle(ask("@finance hi"))
    assert reply.name == "Finance"
    status = {s.role: s for s in board.parts.souls.status()}["finance"]
    assert status.source == "built-in default"


async def test_added_soul_file_adds_a_role(board: Board, workspace: Path) -> None:
    assert "legal" not in board.parts.souls.roles()
    (workspace / "board" / "legal.soul.md").write_text(
        "---\nname: Counsel\nemoji: ⚖️\n---\nYou read the fine print before anyone signs.\n", encoding="utf-8"
    )
    reply = await board.handle(ask("@legal can we sign this?"))
    assert reply.role == "legal" and reply.name == "Counsel"
    assert "I read the fine print" in reply.text


async def test_turn_records_soul_version(board: Board, workspace: Path) -> None:
    await board.handle(ask("@finance hi"))
    (workspace / "board" / "finance.soul.md").write_text(FINANCE_V2, encoding="utf-8")
    await board.handle(ask("@finance again"))
    transcript = await board.parts.sessions.open("board:finance")
    versions = [e["soul_version"] for e in transcript.recent(10) if e["role"] == "assistant"]
    assert versions[1] == parse_soul(FINANCE_V2.encode()).version
    assert versions[0] != versions[1]


async def test_watcher_applies_edits_without_a_turn(board: Board, workspace: Path) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(board.parts.souls.watch(stop))
    try:
        await asyncio.sleep(0.3)
        (workspace / "board" / "finance.soul.md").write_text(FINANCE_V2, encoding="utf-8")
        watched = board.parts.souls._files["finance"]
        for _ in range(100):
            if watched._value is not None and watched._value.meta.name == "Moneybags":
                break
            await asyncio.sleep(0.05)
        assert watched._value is not None and watched._value.meta.name == "Moneybags"
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)


def test_config_soul_path_escape_is_rejected(workspace: Path) -> None:
    roster = RosterSpec.build("board", overrides={"finance": RoleOverride(soul_file="../outside.md")})
    with pytest.raises(PathEscapeError, match="outside the workspace"):
        SoulStore(workspace, roster)
    roster = RosterSpec.build("board", overrides={"finance": RoleOverride(soul_file="/etc/passwd")})
    with pytest.raises(PathEscapeError, match="absolute"):
        SoulStore(workspace, roster)


def test_symlink_out_of_workspace_is_rejected(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("You are outside.\n", encoding="utf-8")
    (workspace / "board" / "link.soul.md").symlink_to(outside)
    roster = RosterSpec.build("board", overrides={"finance": RoleOverride(soul_file="board/link.soul.md")})
    with pytest.raises(PathEscapeError):
        SoulStore(workspace, roster)


def test_config_overrides_name_and_emoji(workspace: Path) -> None:
    roster = RosterSpec.build("board", overrides={"critic": RoleOverride(name="Cassandra", emoji="🔮")})
    profile = SoulStore(workspace, roster).profile("critic")
    assert (profile.name, profile.emoji) == ("Cassandra", "🔮")


def test_every_shipped_soul_is_distinct_and_valid(workspace: Path) -> None:
    for roster in ("board", "sabha", "roundtable"):
        store = SoulStore(workspace, RosterSpec.build(roster))
        profiles = store.profiles()
        assert [p.role for p in profiles] == store.configured_roles()
        assert all(p.source == "workspace" for p in profiles)
        assert len({p.emoji for p in profiles}) == len(profiles)
        assert len({p.soul.text for p in profiles}) == len(profiles)


async def test_added_symlink_out_of_workspace_is_not_served(board: Board, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("You are a leaked secret.\n", encoding="utf-8")
    (workspace / "board" / "spy.soul.md").symlink_to(outside)
    reply = await board.handle(ask("@spy hello"))
    assert reply.role == "general"
    assert "leaked secret" not in reply.text
    status = {s.role: s for s in board.parts.souls.status()}["spy"]
    assert status.version is None and "outside the workspace" in (status.error or "")


def test_refresh_all_reports_an_edited_soul(workspace: Path) -> None:
    store = SoulStore(workspace, RosterSpec())
    store.profiles()
    assert store.refresh_all() == []
    (workspace / "board" / "finance.soul.md").write_text(FINANCE_V2, encoding="utf-8")
    assert store.refresh_all() == ["finance"]  # the watcher logs "loaded version ..." for it


def test_custom_roster_reuses_board_souls_and_its_own(workspace: Path) -> None:
    folder = workspace / "rosters" / "advisors"
    folder.mkdir(parents=True)
    (folder / "legal.soul.md").write_text("---\nname: Counsel\n---\nYou read the fine print.\n", encoding="utf-8")
    roster = RosterSpec.build("advisors", custom={"advisors": ["legal", "finance"]})
    store = SoulStore(workspace, roster)
    profiles = {p.role: p for p in store.profiles()}
    assert set(profiles) == {"general", "legal", "finance"}
    assert profiles["finance"].soul_path == (workspace / "board" / "finance.soul.md").resolve()
    assert profiles["legal"].name == "Counsel" and profiles["finance"].source == "workspace"


async def test_one_step_of_the_loop_sees_one_snapshot_and_the_next_step_sees_an_edit(workspace: Path) -> None:
    """Within one step of the event loop a soul file is looked at once (a meeting's five prompts are built in one
    step); the next step looks again, so an edit is live for whatever runs after it (the next turn)."""
    souls = SoulStore(workspace, RosterSpec())
    path = souls.profile("finance").soul_path
    before = souls.profile("finance").soul.version
    path.write_text(path.read_text(encoding="utf-8") + "\nAlways count the runway in months.\n", encoding="utf-8")
    assert souls.profile("finance").soul.version == before  # the same step: the snapshot it began with
    await asyncio.sleep(0)
    assert souls.profile("finance").soul.version != before
    (path.parent / "ops.soul.md").write_text("You run operations.\n", encoding="utf-8")
    assert "ops" not in souls.roles()  # the folder too is looked at once per step
    await asyncio.sleep(0)
    assert "ops" in souls.roles()


def test_outside_an_event_loop_every_look_reads_the_file(workspace: Path) -> None:
    souls = SoulStore(workspace, RosterSpec())
    path = souls.profile("finance").soul_path
    before = souls.profile("finance").soul.version
    path.write_text(path.read_text(encoding="utf-8") + "\nAlways count the runway in months.\n", encoding="utf-8")
    assert souls.profile("finance").soul.version != before

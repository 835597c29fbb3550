"""Decision buttons in Telegram through a real ``sabha run`` (the offline model, the fake Bot API):
the decision message carries Ratify / Veto / Revisit; the owner's press ratifies it (stored by the
intake, then answered with answerCallbackQuery, the buttons changed to say so); a stranger's and a
member's press change nothing and are told so; a second press is answered "already ratified"; a
redelivered press is answered once; a press for a meeting that does not exist gets a clear answer."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.daemon_support import SabhaProcess, write_config
from tests.fakes.telegram_api import FakeTelegramAPI, SentMessage
from tests.telegram_support import FORUM, FRIEND, OWNER, STRANGER


@pytest.fixture
async def sabha(tmp_path: Path, fake: FakeTelegramAPI) -> AsyncIterator[SabhaProcess]:
    process = SabhaProcess(write_config(tmp_path, fake, None))
    await process.start()
    yield process
    await process.close()


def texts(fake: FakeTelegramAPI) -> list[str]:
    return [m.text for m in fake.sent_messages]


async def said(fake: FakeTelegramAPI, fragment: str, count: int = 1, timeout: float = 30.0) -> list[SentMessage]:
    """Wait until ``count`` sent messages contain ``fragment``; those messages."""
    await fake.wait_until(lambda: sum(fragment in t for t in texts(fake)) >= count, f"{count}x {fragment!r}", timeout)
    return [m for m in fake.sent_messages if fragment in m.text]


async def decided(fake: FakeTelegramAPI, topic: str) -> tuple[SentMessage, str]:
    """Call a meeting from the forum's General topic; its decision message (with buttons) and meeting id."""
    fake.push_text(FORUM, OWNER, f"/meeting {topic}")
    [decision] = await said(fake, "Board decision", timeout=60)
    [(label, data), *_] = fake.buttons_of(FORUM, decision.message_id)
    assert label == "Ratify" and data.startswith("/ratify m-")
    return decision, data.split()[1]


def verdict(data_dir: Path, meeting_id: str) -> tuple[str | None, str | None]:
    with sqlite3.connect(data_dir / "sabha.db") as db:
        row = db.execute("SELECT ratification, ruled_by FROM meetings WHERE id = ?", (meeting_id,)).fetchone()
    return row[0], row[1]


async def test_the_owners_press_ratifies_a_strangers_and_a_members_change_nothing_a_second_press_is_told(
    sabha: SabhaProcess, fake: FakeTelegramAPI, tmp_path: Path
) -> None:
    decision, meeting_id = await decided(fake, "Should we open a Berlin office?")
    assert [b[0] for b in fake.buttons_of(FORUM, decision.message_id)] == ["Ratify", "Veto", "Revisit"]

    # a stranger (not in allowed_user_ids): refused at the gate, told in a dialog, nothing stored or changed
    stranger = fake.push_press(FORUM, decision.message_id, STRANGER, "Ratify")
    await fake.wait_until(lambda: len(fake.answered_presses) == 1, "the stranger's press answered")
    assert fake.answered_presses[0]["callback_query_id"] == stranger["callback_query"]["id"]
    assert "only the board's members" in fake.answered_presses[0]["text"]
    # a member who is not the owner: stored like a typed command, refused by the owner-only check
    fake.push_press(FORUM, decision.message_id, FRIEND, "Ratify")
    [refusal] = await said(fake, "/ratify is for the board's owner only")
    assert refusal.reply_parameters and int(refusal.reply_parameters["message_id"]) == decision.message_id
    assert "Only the board's owner" in fake.answered_presses[1]["text"]
    assert verdict(tmp_path / "sessions", meeting_id) == (None, None)

    owner = fake.push_press(FORUM, decision.message_id, OWNER, "Ratify")
    [ratified] = await said(fake, f"Decision {meeting_id}")
    assert "ratified by" in ratified.text
    assert fake.answered_presses[2]["callback_query_id"] == owner["callback_query"]["id"]
    assert fake.answered_presses[2]["text"].startswith("Received: /ratify")
    assert verdict(tmp_path / "sessions", meeting_id) == ("ratified", f"telegram:{OWNER}")
    # the buttons now say so (and a press on them shows the decision)
    await fake.wait_until(lambda: fake.buttons_of(FORUM, decision.message_id) ==
                          [("✅ Ratified", f"/decision {meeting_id}")], "the buttons changed")

    # the same press delivered again (Telegram retries): one answer, the duplicate is skipped
    fake.push_update(owner)
    # a stale client still showing Ratify presses it again: answered, nothing changed
    fake.push_press(FORUM, decision.message_id, OWNER, data=f"/ratify {meeting_id}")
    [again] = await said(fake, "is already ratified")
    assert "nothing changed" in again.text
    fake.push_press(FORUM, decision.message_id, OWNER, "✅ Ratified")
    [shown] = await said(fake, "✅ ratified by")
    assert shown.text.count(meeting_id) == 1 and "Recommendation:" in shown.text
    assert sum(f"Decision {meeting_id} \u201c" in t and "ratified by" in t for t in texts(fake)) == 1

    # a button for a meeting that no longer exists
    fake.push_press(FORUM, decision.message_id, OWNER, data="/ratify m-20200101-000000-dead")
    [gone] = await said(fake, "There is no meeting 'm-20200101-000000-dead'")
    assert "nothing to ratify" in gone.text
    assert len({a["callback_query_id"] for a in fake.answered_presses}) == len(fake.answered_presses)
    assert sum("is already ratified" in t for t in texts(fake)) == 1  # the redelivered press was not answered again

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

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI, SentMessage
from tests.support.telegram import FORUM, FRIEND, OWNER, STRANGER


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


def rows(data_dir: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(data_dir / "sabha.db") as db:
        return db.execute(sql, params).fetchall()


async def test_veto_by_button_drops_the_actions_and_revisit_convenes_the_follow_up_with_the_reason(
    sabha: SabhaProcess, fake: FakeTelegramAPI, tmp_path: Path
) -> None:
    data = tmp_path / "sessions"
    decision, first = await decided(fake, "Should we raise prices in March?")
    fake.push_press(FORUM, decision.message_id, OWNER, "Veto")
    [vetoed] = await said(fake, f"Decision {first}")
    assert "vetoed by" in vetoed.text and "are dropped: no reminders for them" in vetoed.text
    assert {s for (s,) in rows(data, "SELECT status FROM action_items WHERE meeting_id = ?", first)} == {"dropped"}
    await fake.wait_until(lambda: fake.buttons_of(FORUM, decision.message_id) == [("⛔ Vetoed", f"/decision {first}")],
                          "the buttons say vetoed")

    fake.push_text(FORUM, OWNER, "/meeting Should we hire a second designer?")
    await said(fake, "Board decision", count=2, timeout=60)
    carrier = [m for m in fake.sent_messages if "Board decision" in m.text][-1]
    meeting_id = fake.buttons_of(FORUM, carrier.message_id)[0][1].split()[1]
    fake.push_press(FORUM, carrier.message_id, OWNER, "Revisit")
    await said(fake, f"reply /revisit {meeting_id} <reason>")
    assert rows(data, "SELECT ratification FROM meetings WHERE id = ?", meeting_id) == [(None,)]
    fake.push_text(FORUM, OWNER, f"/revisit {meeting_id} the budget was cut by half")
    await said(fake, "sent back for a revisit")
    await said(fake, "Revisit: Should we hire a second designer?", timeout=60)  # the follow-up's status, here
    await sabha.wait_for_log(r"follow-up meeting m-\S+ convened", timeout=30)
    await said(fake, "Board decision", count=3, timeout=60)  # the follow-up decided anew, in the same place
    [(follow_up,)] = rows(data, "SELECT follow_up_id FROM meetings WHERE id = ?", meeting_id)
    [(topic, agenda, revisits)] = rows(data, "SELECT topic, agenda, revisit_of FROM meetings WHERE id = ?", follow_up)
    assert topic == "Revisit: Should we hire a second designer?" and revisits == meeting_id
    assert '"the budget was cut by half"' in str(agenda)
    assert rows(data, "SELECT status FROM scheduled_work WHERE key = ?", f"follow_up:decision:{meeting_id}") == [
        ("done",)]


async def test_by_webhook_a_press_is_stored_before_the_200_and_answered_in_a_private_chat(
    tmp_path: Path, fake: FakeTelegramAPI
) -> None:
    from tests.support.daemon import WEBHOOK_SECRET

    process = SabhaProcess(write_config(tmp_path, fake, None, mode="webhook"))
    await process.start()
    try:
        url = f"http://127.0.0.1:{process.port}/telegram/webhook"
        update = fake.build_text_update(OWNER, OWNER, "/meeting Should we sponsor the conference?", is_forum=False,
                                        chat_type="private")
        assert (await fake.deliver_webhook(url, update, WEBHOOK_SECRET))[0] == 200
        await fake.wait_until(lambda: any("Board decision" in m.text for m in fake.sent_to(OWNER)), "the decision",
                              timeout=60)
        decision = next(m for m in fake.sent_to(OWNER) if "Board decision" in m.text)
        press = fake.build_press(OWNER, decision.message_id, OWNER, "Ratify")
        assert (await fake.deliver_webhook(url, press, WEBHOOK_SECRET))[0] == 200
        # the 200 came after the press was stored; the answer to the press with it
        rows_now = rows(tmp_path / "sessions", "SELECT message_id FROM inbound_messages WHERE message_id LIKE ?",
                        f"%:cb:{press['callback_query']['id']}")
        assert len(rows_now) == 1
        await fake.wait_until(lambda: len(fake.answered_presses) == 1, "the press answered")
        await fake.wait_until(lambda: any("ratified by" in m.text for m in fake.sent_to(OWNER)), "ratified",
                              timeout=30)
        assert (await fake.deliver_webhook(url, press, WEBHOOK_SECRET))[0] == 200  # Telegram retries: a duplicate
        fake.clear_records()
        marker = fake.build_text_update(OWNER, OWNER, "/decisions", is_forum=False, chat_type="private")
        assert (await fake.deliver_webhook(url, marker, WEBHOOK_SECRET))[0] == 200
        await fake.wait_until(lambda: any("Decisions (" in m.text for m in fake.sent_to(OWNER)), "the marker",
                              timeout=30)
        assert not any("ratified" in m.text and "Decision m-" in m.text for m in fake.sent_to(OWNER))
    finally:
        await process.close()

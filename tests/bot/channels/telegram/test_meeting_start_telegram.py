"""A meeting over ``board.meetings.confirm_over_usd`` waits for the owner's Start, through a real ``sabha run``
(the fake Bot API, the echo model at a price that makes every meeting dear): ``/meeting`` replies with the
estimate and the question carries Start and Cancel; the model receives no request at all until Start is
pressed; a stranger's press and a member's press start nothing; after a restart the owner's press on the same
button starts it (the request waited in the state db); a second press starts nothing twice; Cancel drops
another request and nothing is spent for it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI, SentMessage
from tests.support.telegram import FORUM, FRIEND, OWNER, STRANGER

#: every meeting waits (the echo model is priced at $1000 / $2000 per million tokens); the budget lets it run
GATED = ["board:", "  meetings:", "    confirm_over_usd: 0.05", "    budget_usd: 100000", "    max_turns_per_agent: 1"]


def texts(fake: FakeTelegramAPI) -> list[str]:
    return [m.text for m in fake.sent_messages]


async def said(fake: FakeTelegramAPI, fragment: str, count: int = 1, timeout: float = 60.0) -> list[SentMessage]:
    await fake.wait_until(lambda: sum(fragment in t for t in texts(fake)) >= count, f"{count}x {fragment!r}", timeout)
    return [m for m in fake.sent_messages if fragment in m.text]


def rows(data_dir: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(data_dir / "sabha.db") as db:
        return db.execute(sql, params).fetchall()


async def test_the_meeting_waits_for_the_owners_start_across_a_restart_and_nothing_is_spent_before(
    tmp_path: Path, fake: FakeTelegramAPI
) -> None:
    data = tmp_path / "sessions"
    async with EchoModel(latency=0.0) as model:
        config = write_config(tmp_path, fake, model, price=True, extra=GATED)
        first = SabhaProcess(config)
        await first.start()
        try:
            fake.push_text(FORUM, OWNER, "/meeting Should we open a Pune office?")
            [reply] = await said(fake, "waits for your Start (request 1)")
            assert "Expected: about $" in reply.text and "board.meetings.confirm_over_usd" in reply.text
            [ask] = await said(fake, "Meeting request 1: \u201cShould we open a Pune office?\u201d waits")
            assert fake.buttons_of(FORUM, ask.message_id) == [("Start", "/start_meeting 1"),
                                                              ("Cancel", "/cancel_meeting 1")]
            # the estimate: roster, rounds, the model's price, the tokens (defaults: no meeting before), the caps
            assert "openai:echo: $1000 in / $2000 out per million tokens" in ask.text
            assert "defaults (no earlier meeting to learn from)" in ask.text and "caps: $100000" in ask.text
            await first.wait_for_log(r"meeting request 1 \(Should we open a Pune office\?\) waits")

            # a stranger's press: refused at the gate; a member's: refused as owner-only; nothing starts
            fake.push_press(FORUM, ask.message_id, STRANGER, "Start")
            await fake.wait_until(lambda: len(fake.answered_presses) == 1, "the stranger's press answered")
            assert "only the board's members" in fake.answered_presses[0]["text"]
            fake.push_press(FORUM, ask.message_id, FRIEND, "Start")
            await said(fake, "/start_meeting is for the board's owner only")
            assert rows(data, "SELECT status FROM meeting_starts WHERE id = 1") == [("waiting",)]
            assert model.calls == 0, "a model was asked before Start"  # nothing spent
            assert rows(data, "SELECT COUNT(*) FROM llm_calls") == [(0,)]
            assert rows(data, "SELECT COUNT(*) FROM meetings") == [(0,)]
        finally:
            await first.close()

        second = SabhaProcess(config)  # the request waited in the state db
        await second.start()
        try:
            assert model.calls == 0
            fake.push_press(FORUM, ask.message_id, OWNER, "Start")
            [started] = await said(fake, "Starting the board meeting on \u201cShould we open a Pune office?\u201d")
            meeting_id = started.text.split("(meeting ", 1)[1].split(")", 1)[0]
            await fake.wait_until(lambda: model.calls > 0, "the meeting's first model call")
            assert rows(data, "SELECT status, meeting_id, decided_by FROM meeting_starts WHERE id = 1") == [
                ("started", meeting_id, f"telegram:{OWNER}")]
            assert rows(data, "SELECT topic FROM meetings WHERE id = ?", meeting_id) == [
                ("Should we open a Pune office?",)]
            # the same button pressed again: nothing starts twice
            fake.push_press(FORUM, ask.message_id, OWNER, "Start")
            [again] = await said(fake, f"Meeting request 1 was already started as meeting {meeting_id}")
            assert "nothing changed" in again.text
            await fake.wait_until(lambda: rows(data, "SELECT status FROM meetings WHERE id = ?", meeting_id) == [
                ("ended",)], "the meeting ended", timeout=240)
            assert rows(data, "SELECT COUNT(*) FROM meetings") == [(1,)]
            assert rows(data, "SELECT status FROM scheduled_work WHERE key = 'meeting_start:expire:1'") == [
                ("cancelled",)]

            # Cancel: the request is dropped, nothing spent for it
            calls = model.calls
            fake.push_text(FORUM, OWNER, "/meeting Should we hire a designer?")
            [ask2] = await said(fake, "Meeting request 2: \u201cShould we hire a designer?\u201d waits")
            assert "from the last 1 meeting" in ask2.text or "defaults" in ask2.text
            fake.push_press(FORUM, ask2.message_id, OWNER, "Cancel")
            await said(fake, "Meeting request 2 (\u201cShould we hire a designer?\u201d) is cancelled")
            fake.push_press(FORUM, ask2.message_id, OWNER, "Start")
            await said(fake, "Meeting request 2 is cancelled; nothing changed")
            assert model.calls == calls and rows(data, "SELECT COUNT(*) FROM meetings") == [(1,)]
        finally:
            await second.close()

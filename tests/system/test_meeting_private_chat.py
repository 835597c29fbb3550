"""A meeting watched from a private chat (issue 40: "a private chat ... show the same sequence"): a real
``sabha run`` on the fake Telegram Bot API, the owner's private chat with the bot, the model that holds a real
meeting (tests/support/meeting_model.py).

In that chat: the reply to ``/meeting``, the status, each statement as its own message in speaking order, the
decision with its buttons and the minutes, and no forum topic for it. What the owner writes there during
round 1 is a contribution (answered with one line, no model call), quoted to every member in round 2. Killed
with SIGKILL during round 2 and started again, the meeting goes on in the same chat: every statement there
once, the decision once.
"""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path
from typing import Any

from bot.intake.courier import ChannelTexts
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI, SentMessage
from tests.support.meeting_model import MeetingModel, statement_marker
from tests.support.telegram import OWNER, SPECIALISTS, eventually

ROUNDS = 2
TOPIC = "Should we open a Pune office?"
MEETINGS = ["board:", "  meetings:", f"    max_turns_per_agent: {ROUNDS}", "    agent_timeout_s: 600",
            "    max_duration_s: 3600", "    budget_usd: 100"]
AGAIN = ChannelTexts().possibly_repeated.split(":")[0]  # "↻ Sent again"
SAID = "@finance redo it with 20% churn"
CHAT = OWNER  # the owner's private chat with the bot has the owner's id


def rows(root: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(root / "sessions" / "sabha.db") as db:
        return db.execute(sql, params).fetchall()


def statements(fake: FakeTelegramAPI) -> list[SentMessage]:
    return [m for m in fake.sent_to(CHAT) if "board meeting, round" in m.text]


def recorded_sent(root: Path, role: str, round_no: int) -> bool:
    return bool(rows(root, "SELECT 1 FROM meeting_posts WHERE channel = 'telegram' AND item = ? AND status = 'sent'",
                     f"statement:{round_no}:{role}"))


async def test_a_meeting_called_in_a_private_chat_is_watched_and_joined_there_and_survives_a_kill(
    tmp_path: Path, fake: FakeTelegramAPI
) -> None:
    async with MeetingModel() as model:
        config = write_config(tmp_path, fake, model, stream=False, extra=MEETINGS)  # type: ignore[arg-type]
        first, second = SabhaProcess(config), SabhaProcess(config)
        try:
            await first.start()
            model.hold("round 1")
            model.hold("round 2")
            fake.push_text(CHAT, OWNER, f"/meeting {TOPIC}")
            await model.wait_for("round 1 held", lambda: len(model.waiting) == len(SPECIALISTS))
            fake.push_text(CHAT, OWNER, SAID)
            try:
                await eventually(lambda: any("Noted for round 2" in m.text for m in fake.sent_to(CHAT)),
                                 "the contribution noted", timeout=120)
            except AssertionError as exc:
                sent = [m.text[:80] for m in fake.sent_to(CHAT)]
                raise AssertionError(f"{exc}: {sent}\n{first.log[-3000:]}") from None
            model.unhold("round 1")
            await model.wait_for("round 2 held", lambda: len(model.waiting) == len(SPECIALISTS))
            await eventually(lambda: all(recorded_sent(tmp_path, r, 1) for r in SPECIALISTS),
                             "round 1 posted in the chat and recorded as sent", timeout=120)
            [(meeting_id, status)] = rows(tmp_path, "SELECT id, status FROM meetings")
            assert status == "running"
            assert await first.signal(signal.SIGKILL) == -signal.SIGKILL
            model.release()
            await second.start()
            await second.wait_for_log(rf"meeting {meeting_id}: resumed at round 2")
            await eventually(lambda: any(m.text.startswith("📝 Minutes") for m in fake.sent_to(CHAT)),
                             "the minutes in the private chat", timeout=180)
        finally:
            await first.close()
            await second.close()
    assert fake.created_topics == [] or all(TOPIC not in t["name"] for t in fake.created_topics)
    # the sequence, in the chat: reply, status, statements in the order stored, decision (with buttons), minutes
    stored = rows(tmp_path, "SELECT round, role FROM meeting_statements WHERE meeting_id = ? ORDER BY id", meeting_id)
    assert len(stored) == len(SPECIALISTS) * ROUNDS
    posted = [m for m in statements(fake) if not m.text.startswith(AGAIN)]
    for n, role in stored:  # each once (a post whose answer was lost in the kill may come once more, marked)
        marker = statement_marker(role, n)
        assert sum(marker in m.text for m in posted) == 1, (marker, [m.text[:60] for m in statements(fake)])
    order = [next(statement_marker(r, n) for n, r in stored if statement_marker(r, n) in m.text) for m in posted]
    assert order == [statement_marker(r, n) for n, r in stored]
    heads = [m.text.split("\n")[0] for m in fake.sent_to(CHAT)]
    assert heads.count("🏛 Board decision") == 1 and heads.count("📝 Minutes") == 1, heads
    assert sum(h.startswith("🏛 Board meeting") for h in heads) == 1  # its status is edited, not posted again
    decision = next(m for m in fake.sent_to(CHAT) if m.text.startswith("🏛 Board decision"))
    assert [label for label, _ in fake.buttons_of(CHAT, decision.message_id)] == ["Ratify", "Veto", "Revisit"]
    assert heads.index("🏛 Board decision") < heads.index("📝 Minutes")
    # the owner at the table, from the private chat: quoted to every member in round 2, and no model call for it
    second_round = {a.role: a.text for a in model.asked if a.kind == "round 2"}
    assert set(second_round) == set(SPECIALISTS)
    assert all(SAID in text for text in second_round.values()), second_round
    assert not [a for a in model.asked if SAID in a.text and a.kind not in ("round 2", "synthesis")]

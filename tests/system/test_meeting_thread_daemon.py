"""One thread per meeting and advisors as themselves, through a real ``sabha run`` against the fake Telegram Bot API
(a forum), the offline model (no key) and two role bots of their own plus one Telegram refuses.

The owner calls a meeting in General: it opens its own topic, where the status, every statement (one message each,
in the order the meeting stored them), the decision with its buttons and the minutes appear; General and each
speaking advisor's topic get one pointer (typing while a member speaks needs a slow model: test_meeting_thread.py
shows it with the scripted one). Finance's and the
critic's statements come from their own bots (the fake records the token of every message), strategy's bot is
refused (a revoked token): its statements come from the main bot and that is said once (a log line, one line to the
owner). An ordinary answer of finance in its topic comes from finance's bot too.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import FORUM, OWNER, SPECIALISTS, TOKEN, eventually

FINANCE_TOKEN = "700001:finance-bot_token"
CRITIC_TOKEN = "700002:critic-bot_token"
REVOKED_TOKEN = "700003:strategy-revoked"
TOPIC = "Should we open a Pune office?"
LABELS = {"research": "🔬 Research", "content": "📣 Content", "finance": "💰 Finance", "strategy": "♟️ Strategy",
          "critic": "🦉 Critic"}
EXTRA = ["  stream: false",  # (still the telegram section) answers as whole messages, so who sent one is clear
         "board:", "  meetings:", "    max_turns_per_agent: 2",
         "  agents:",
         "    finance:", "      telegram_token: ${FINANCE_BOT_TOKEN}",
         "    critic:", "      telegram_token: ${CRITIC_BOT_TOKEN}",
         "    strategy:", "      telegram_token: ${STRATEGY_BOT_TOKEN}"]


@pytest.fixture
async def forum() -> AsyncIterator[FakeTelegramAPI]:
    async with FakeTelegramAPI(token=TOKEN) as fake:
        fake.add_bot(FINANCE_TOKEN, bot_id=7000000011, username="sabha_finance_bot", first_name="Finance")
        fake.add_bot(CRITIC_TOKEN, bot_id=7000000012, username="sabha_critic_bot", first_name="Critic")
        yield fake  # the strategy bot's token is not one the fake knows: Telegram answers 401


def statements(root: Path) -> list[tuple[int, str]]:
    """(round, role) of every stored statement, in the order the meeting stored them."""
    with contextlib.closing(sqlite3.connect(root / "sessions" / "sabha.db")) as db:
        return [(int(r), str(role)) for r, role in
                db.execute("SELECT round, role FROM meeting_statements ORDER BY id").fetchall()]


def ended(root: Path) -> bool:
    with contextlib.closing(sqlite3.connect(root / "sessions" / "sabha.db")) as db:
        return bool(db.execute("SELECT 1 FROM meetings WHERE status = 'ended'").fetchall())


async def test_a_meeting_opens_its_topic_and_role_bots_speak_as_themselves(tmp_path: Path,
                                                                           forum: FakeTelegramAPI) -> None:
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "FINANCE_BOT_TOKEN": FINANCE_TOKEN, "CRITIC_BOT_TOKEN": CRITIC_TOKEN,
           "STRATEGY_BOT_TOKEN": REVOKED_TOKEN}
    sabha = SabhaProcess(write_config(tmp_path, forum, None, extra=EXTRA), env=env)
    try:
        await sabha.start()
        await sabha.wait_for_log(r"finance speaks as its own bot @sabha_finance_bot")
        forum.push_text(FORUM, OWNER, f"/meeting {TOPIC}")
        await eventually(lambda: ended(tmp_path), "the meeting's end", timeout=180)
        await forum.wait_until(lambda: any(m.text.startswith("📝 Minutes") for m in forum.sent_messages),
                               "the minutes", timeout=120)
        [topic] = [t for t in forum.created_topics if t["name"].startswith("🏛")]
        own = topic["message_thread_id"]
        assert topic["name"] == f"🏛 {TOPIC}"
        inside = forum.sent_to(FORUM, own)
        assert inside[0].text.startswith(f"🏛 Board meeting: {TOPIC}")
        posted = [m for m in inside if " · board meeting, round " in m.text.split("\n")[0]]
        stored = statements(tmp_path)
        assert {r for r, _ in stored} == {1, 2}
        # each statement its own message, once, in the order the meeting stored them (as each finished)
        assert [m.text.split("\n")[0] for m in posted] == [f"{LABELS[role]} · board meeting, round {n}"
                                                           for n, role in stored]
        heads = [m.text.split("\n")[0] for m in inside]
        assert heads.index("🏛 Board decision") > heads.index(posted[-1].text.split("\n")[0])
        decision = next(m for m in inside if m.text.startswith("🏛 Board decision"))
        assert forum.buttons_of(FORUM, decision.message_id)
        # who sent what: the role bots their own role's statements, the main bot the rest
        by_role = {role: {m.token for m, (_, r) in zip(posted, stored, strict=True) if r == role}
                   for role in SPECIALISTS}
        assert by_role["finance"] == {FINANCE_TOKEN} and by_role["critic"] == {CRITIC_TOKEN}
        assert by_role["strategy"] == {TOKEN}  # refused: the main bot sends for it
        assert by_role["research"] == by_role["content"] == {TOKEN}
        assert {m.token for m in inside if m not in posted} == {TOKEN}  # status, decision, minutes
        # pointers: General (where it was called) and each advisor's topic, one each
        link = f"https://t.me/c/{str(FORUM)[4:]}/{own}"
        pointer = f"🏛 In the meeting on \u201c{TOPIC}\u201d: {link}"
        assert [m.text for m in forum.sent_to(FORUM, None)].count(pointer) == 1
        threads = {t["name"]: t["message_thread_id"] for t in forum.created_topics}
        for role in SPECIALISTS:
            thread = threads[LABELS[role]]
            assert [m.text for m in forum.sent_to(FORUM, thread)] == [pointer], role
        # the refused bot: said once, in the log and to the owner in General
        assert len([line for line in sabha.lines if "the bot of strategy" in line]) == 1
        warned = [m for m in forum.sent_to(FORUM, None) if m.text.startswith("⚠️ The Telegram bot of strategy")]
        assert len(warned) == 1 and REVOKED_TOKEN not in sabha.log
        assert FINANCE_TOKEN not in sabha.log and CRITIC_TOKEN not in sabha.log
        # an ordinary answer of finance in its own topic comes from its bot
        finance_topic = threads[LABELS["finance"]]
        forum.push_text(FORUM, OWNER, "What does a Pune office cost us per month?", thread_id=finance_topic)
        await forum.wait_until(lambda: len(forum.sent_to(FORUM, finance_topic)) >= 2, "finance's answer",
                               timeout=120)
        answer = forum.sent_to(FORUM, finance_topic)[-1]
        assert answer.token == FINANCE_TOKEN and answer.result["from"]["username"] == "sabha_finance_bot"
    finally:
        await sabha.close()

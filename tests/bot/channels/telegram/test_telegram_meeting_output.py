"""Meeting output inside Telegram's rate budget: real PTB against the fake Bot API, with the
forum's real budget (20 messages a minute, burst 10) on a virtual or manual clock.

Statements, the decision and the minutes are never held up by status edits; the status
is edited only in quiet moments with budget to spare, and its final edit comes last; at
shutdown an ended meeting's decision and minutes go out before statements still queued.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from board.app import Board
from board.envelope import Envelope
from board.room.meeting import MeetingEvent
from bot.channels.telegram.channel import TelegramChannel
from bot.channels.telegram.meeting import STATUS_RESERVE
from bot.channels.telegram.ratelimit import FloodControl, RateSettings
from tests.bot.channels.telegram.test_telegram_paths import DECISION, event
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import (
    FORUM,
    OWNER,
    SPECIALISTS,
    ManualClock,
    VirtualClock,
    eventually,
    running,
    tg_settings,
)

TELEGRAM_BUDGET = RateSettings(group_per_minute=20, group_burst=10, private_per_second=1, global_per_second=1000)
MINUTES = "# Minutes\n\n**Topic:** Expand to Europe?\n\nDecision: pilot in Germany."


def forum_origin() -> Envelope:
    return Envelope(channel="telegram", text="/meeting Expand to Europe?", sender=str(OWNER), chat_id=str(FORUM),
                    message_id="9", is_group=True)


def opening(origin: Envelope) -> list[MeetingEvent]:
    return [event("started", origin, role="general", text="Expand to Europe?", participants=list(SPECIALISTS)),
            event("framed", origin, role="general", text="Agenda: market, cost, story, risks")]


def round_of(origin: Envelope, n: int) -> list[MeetingEvent]:
    return [event("agent_spoke", origin, role=r, text=f"{r} in round {n}", round_=n) for r in SPECIALISTS]


def closing(origin: Envelope) -> list[MeetingEvent]:
    return [event("decision", origin, role="general", text=DECISION["recommendation"], decision=DECISION),
            event("ended", origin, role="general", text="completed", stop_reason="completed", error=None,
                  minutes=MINUTES)]


def three_rounds(origin: Envelope) -> list[MeetingEvent]:
    events = opening(origin)
    for n in (1, 2, 3):
        events += round_of(origin, n)
        events += [event("disagreement", origin, role="critic", text="disagrees", round_=n),
                   event("round_done", origin, text=f"round {n} done", round_=n)]
    return events + closing(origin)




def on_clock(channel: TelegramChannel, clock: VirtualClock | ManualClock) -> None:
    """The forum's real budget, on the test's clock."""
    channel.flood = channel.outbound.flood = FloodControl(TELEGRAM_BUDGET, clock=clock.now, sleep=clock.sleep)


def kinds(fake: FakeTelegramAPI) -> list[str]:
    """The meeting's API calls in order: status, statement, decision, minutes, edit."""
    out = []
    for method, params in fake.calls:
        if method == "editMessageText":
            out.append("edit")
        elif method == "sendMessage":
            text = str(params.get("text", ""))
            out.append("decision" if text.startswith("🏛 Board decision") else "minutes" if text.startswith(
                "📝 Minutes") else "status" if text.startswith("🏛 Board meeting") else "pointer" if text.startswith(
                "🏛 In the meeting") else "statement")
    return out


async def test_status_edits_never_hold_up_a_meetings_posts(board: Board, fake: FakeTelegramAPI) -> None:
    """A meeting faster than the forum's budget: 15 statements, the decision and the minutes
    use every token; the status gets a single edit, after the minutes."""
    clock = VirtualClock()
    async with running(board, tg_settings(fake)) as channel:
        on_clock(channel, clock)
        channel.meetings.clock, channel.meetings.sleep = clock.now, clock.sleep
        started, *rest = three_rounds(forum_origin())
        await channel.meetings(started)
        await fake.wait_for_messages(1)  # the status message
        for e in rest:
            await channel.meetings(e)
        await channel.meetings.drain(5)
    # the meeting's topic: its status, the pointer where it was called, each advisor's pointer before its first
    # statement, then the statements in order
    assert kinds(fake) == ["status", "pointer"] + ["pointer", "statement"] * 5 + ["statement"] * 10 \
        + ["decision", "minutes", "edit"]
    assert {m.message_thread_id for m in fake.sent_messages if not m.text.startswith("🏛 In the meeting")} \
        == {fake.created_topics[-1]["message_thread_id"]}
    [final] = fake.edited_messages
    assert "ended (completed)" in final.text and "Disagreements: 3" in final.text


async def test_status_is_edited_in_quiet_moments_leaving_budget_for_posts(board: Board, fake: FakeTelegramAPI) -> None:
    clock = VirtualClock()
    origin = forum_origin()
    async with running(board, tg_settings(fake)) as channel:
        on_clock(channel, clock)
        channel.meetings.clock, channel.meetings.sleep = clock.now, clock.sleep
        for e in opening(origin) + round_of(origin, 1):
            await channel.meetings(e)
        await fake.wait_for_messages(12)  # the status, the pointers and round 1
        # the models think: two status changes come, one edit shows both, once the interval allows
        await channel.meetings(event("disagreement", origin, role="critic", text="disagrees", round_=1))
        await channel.meetings(event("consensus", origin, role="finance", text="agrees", round_=1))
        [edit] = await fake.wait_for_call("editMessageText")
        assert "Disagreements: 1 · Consensus points: 1" in edit["text"]
        assert channel.flood.bucket(FORUM).tokens >= STATUS_RESERVE  # the edit left room for the next posts
        # round 2 drains the budget: the status waits until its statements are out and tokens are back
        for e in round_of(origin, 2):
            await channel.meetings(e)
        await fake.wait_for_call("editMessageText", 2)
        assert channel.flood.bucket(FORUM).tokens >= STATUS_RESERVE
        for e in closing(origin):
            await channel.meetings(e)
        await channel.meetings.drain(5)
    assert kinds(fake) == (["status", "pointer"] + ["pointer", "statement"] * 5 + ["edit"] + ["statement"] * 5
                           + ["edit"] + ["decision", "minutes", "edit"])


async def test_at_shutdown_the_decision_and_minutes_go_before_queued_statements(
    board: Board, fake: FakeTelegramAPI, caplog: pytest.LogCaptureFixture
) -> None:
    """SIGTERM while a finished meeting's output still waits for the forum's budget."""
    clock = ManualClock()  # the budget refills only when the test says so
    caplog.set_level(logging.WARNING, "sabha.telegram")
    async with asyncio.timeout(10), running(board, tg_settings(fake), status_interval=0.05,
                                            shutdown_grace_s=0.5) as channel:  # shutdown must not hang
        on_clock(channel, clock)
        started, *rest = three_rounds(forum_origin())
        await channel.meetings(started)
        await fake.wait_for_messages(1)  # the status message
        for e in rest:  # the meeting outruns the forum's budget
            await channel.meetings(e)
        # the burst: the topic, its status, the pointers and the first statements; the 10th post waits for a token
        await fake.wait_for_messages(9)
        await eventually(lambda: channel.flood.bucket(FORUM).busy, "the 10th statement to wait for a token")
        await channel.stop_intake()  # what the daemon does first on SIGTERM
        clock.advance(14)  # about 4 tokens: enough for what matters, not for the statements left
        await channel.meetings.drain(5)
    assert kinds(fake) == ["status", "pointer"] + ["pointer", "statement"] * 4 + ["decision", "minutes", "edit"]
    assert "ended (completed)" in fake.edited_messages[-1].text
    assert "11 statement(s) of meeting m-test-1 were not posted" in caplog.text
    assert "`sabha meetings show m-test-1` has them" in caplog.text


async def test_a_shutdown_that_runs_out_of_time_says_what_was_not_posted(
    board: Board, fake: FakeTelegramAPI, caplog: pytest.LogCaptureFixture
) -> None:
    clock = ManualClock()  # no token ever comes back
    caplog.set_level(logging.WARNING, "sabha.telegram")
    async with asyncio.timeout(10), running(board, tg_settings(fake), status_interval=0.05,
                                            shutdown_grace_s=0.05) as channel:  # shutdown must not hang
        on_clock(channel, clock)
        for e in three_rounds(forum_origin()):
            await channel.meetings(e)
        await fake.wait_for_messages(9)  # the topic took the burst's first token
    assert "decision" not in kinds(fake)
    assert "shutdown cut the output of meeting m-test-1 short: 12 statement(s), 1 pointer(s) to its topic, decision, " \
        "minutes not posted" in caplog.text
    assert "`sabha meetings show m-test-1` has them" in caplog.text

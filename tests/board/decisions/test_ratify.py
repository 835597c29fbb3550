"""Ratification (issue 27) on the board: /ratify, /veto, /revisit, /decisions, who and when, actions dropped,
the follow-up meeting of a revisit with the reason on its agenda, and the clear answers to bad input."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from board.app import Board
from board.clock import FakeClock
from board.decisions.ratify import Outcome, Ruling, Verdict
from board.envelope import Envelope
from board.room.followup import FollowUps, follow_up_key, reminder_key
from board.room.meeting import MeetingSettings
from board.schedule import NewWork, Place, ScheduleRunner, WorkKind, WorkStatus
from board.storage import StateURL
from tests.board.decisions.test_actions import answer
from tests.support.board import board_with
from tests.support.fakes.scripted_model import ScriptedModel
from tests.support.schedule import RecordingDeliver

OWNER = dict(channel="telegram", sender="1", sender_name="Olive", chat_id="1", is_owner=True)
FRIEND = dict(channel="telegram", sender="2", sender_name="Fred", chat_id="1", is_owner=False)
ELSEWHERE = dict(channel="telegram", sender="1", sender_name="Olive", chat_id="77", is_owner=True)
MOMENT = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


pytestmark = pytest.mark.backends


@pytest.fixture
async def board(workspace: Path, data_dir: Path, state_url: StateURL | None) -> AsyncIterator[Board]:
    board = await board_with(workspace, data_dir, ScriptedModel(default=answer),
                             meetings=MeetingSettings(max_turns_per_agent=1), state=state_url)
    board.parts.decisions.clock = FakeClock(MOMENT)
    yield board
    await board.close()


async def say(board: Board, text: str, who: dict[str, object] = OWNER) -> str:
    return (await board.handle(Envelope(text=text, **who))).text  # type: ignore[arg-type]


async def meeting(board: Board, topic: str = "Should we expand to Europe?", who: dict[str, object] = OWNER) -> str:
    started = await say(board, f"/meeting {topic}", who)
    assert "Convening the board" in started
    await board.parts.room.drain(20)
    [row] = [m for m in await board.parts.room.store.list(50) if m.topic == topic]
    return row.id


async def test_ratify_without_an_id_rules_on_the_latest_proposed_decision_here_and_records_who_and_when(
    board: Board
) -> None:
    first = await meeting(board)
    assert "⏳ proposed" in await say(board, "/decisions")
    reply = await say(board, "/ratify")
    assert f"Decision {first}" in reply and "ratified by Olive at 2026-11-25 12:00:00 UTC" in reply
    [record] = await board.parts.decisions.recent()
    assert (record.verdict, record.ruled_by, record.ruled_at) == (Verdict.RATIFIED, "telegram:1",
                                                                  "2026-11-25T12:00:00+00:00")
    again = await say(board, f"/ratify {first}")
    assert "already ratified (by Olive at 2026-11-25 12:00:00 UTC); nothing changed" in again
    assert "No proposed decision from a meeting here" in await say(board, "/ratify")
    assert [r["verdict"] for r in await board.parts.decisions.rulings(first)] == ["ratified"]


async def test_a_non_owner_is_refused_and_nothing_changes(board: Board) -> None:
    first = await meeting(board)
    assert "for the board's owner only" in await say(board, f"/ratify {first}", FRIEND)
    assert "for the board's owner only" in await say(board, f"/veto {first}", FRIEND)
    [record] = await board.parts.decisions.recent()
    assert record.verdict is Verdict.PROPOSED and record.ruled_by is None


async def test_veto_drops_the_open_actions_and_a_vetoed_decision_cannot_be_ratified(board: Board) -> None:
    first = await meeting(board)
    before = await board.parts.room.store.actions()
    assert len(before) == 3
    for action in before:  # their reminders, as the due dates would schedule them
        await board.parts.schedule.add(NewWork(WorkKind.REMINDER, reminder_key(action.id), MOMENT, Place("telegram",
                                                                                                         "1"),
                                         {"action": action.id}))
    reply = await say(board, f"/veto {first} VAT costs are unknown")
    assert "vetoed by Olive" in reply and "Reason: VAT costs are unknown" in reply
    assert "3 open action item(s)" in reply and "no reminders" in reply
    assert await board.parts.room.store.actions() == []
    everything = await board.parts.room.store.actions(include_done=True)
    assert {a.status for a in everything} == {"dropped"}
    for action in before:
        row = await board.parts.schedule.get(reminder_key(action.id))
        assert row is not None and row.status is WorkStatus.CANCELLED
    late = await say(board, f"/ratify {first}")
    assert "was vetoed" in late and "cannot be ratified now; nothing changed" in late
    assert "/done" not in (await say(board, "/actions"))  # nothing left to close


async def test_revisit_needs_a_reason_then_convenes_the_follow_up_with_the_reason_on_its_agenda(board: Board) -> None:
    first = await meeting(board)
    ask = await say(board, f"/revisit {first}")
    assert f"reply /revisit {first} <reason>" in ask
    assert (await board.parts.decisions.recent())[0].verdict is Verdict.PROPOSED
    reply = await say(board, f"/revisit {first} the German VAT rules changed")
    assert "sent back for a revisit" in reply and "follow-up meeting on “Revisit: Should we" in reply
    runner = ScheduleRunner(board.parts.schedule, RecordingDeliver())
    assert await runner.run_due() == 1  # the follow-up was scheduled work, due at once
    await board.parts.room.drain(20)
    assert await runner.run_due() == 0  # convened once
    row = await board.parts.schedule.get(follow_up_key(first))
    assert row is not None
    meetings = len(await board.parts.room.store.list(50))
    again = FollowUps(board.parts.room, board.parts.decisions, board.parts.schedule, board.parts.clock)
    assert await again.convene(row) is None  # the handler run again (a crash before it was marked done)
    assert len(await board.parts.room.store.list(50)) == meetings  # finds the link: nothing convened twice
    original = (await board.parts.decisions.find(first)).record
    assert original is not None and original.follow_up_id is not None
    follow = await board.parts.room.store.get(original.follow_up_id)
    assert follow is not None and follow.topic == "Revisit: Should we expand to Europe?"
    assert follow.agenda is not None and '"the German VAT rules changed"' in follow.agenda
    assert follow.decision is not None  # the follow-up decided anew
    shown = await say(board, f"/decision {original.follow_up_id}")
    assert f"Revisits: {first}" in shown and "⏳ proposed" in shown
    assert "cannot be ratified now" in await say(board, f"/ratify {first}")


async def test_bad_references_get_clear_answers(board: Board) -> None:
    assert "No proposed decision from a meeting here" in await say(board, "/ratify")
    gone = await say(board, "/ratify m-20200101-000000-dead")
    assert "There is no meeting 'm-20200101-000000-dead'" in gone
    first = await meeting(board)
    assert "No proposed decision from a meeting here" in await say(board, "/ratify", ELSEWHERE)
    ratified = await say(board, f"/ratify {first[:12]}", ELSEWHERE)  # a unique prefix, from anywhere
    assert "ratified by Olive" in ratified


TOPIC_42 = dict(OWNER, chat_id="-100", thread_id=42)
TOPIC_99 = dict(OWNER, chat_id="-100", thread_id=99)


async def test_a_bare_ruling_in_one_topic_never_rules_on_another_topics_decision(board: Board) -> None:
    mid = await meeting(board, "Should topic 42 hire?", TOPIC_42)
    for command in ("/veto not for this topic", "/ratify", "/revisit costs doubled"):
        answer_99 = await say(board, command, TOPIC_99)
        assert "No proposed decision from a meeting here" in answer_99, (command, answer_99)
    assert "No decision from a meeting here yet" in await say(board, "/decision", TOPIC_99)
    assert (await board.parts.decisions.find(mid)).record.verdict is Verdict.PROPOSED  # type: ignore[union-attr]
    assert mid in await say(board, "/decision", TOPIC_42)
    assert "ratified by Olive" in await say(board, "/ratify", TOPIC_42)
    assert (await board.parts.decisions.find(mid)).record.verdict is Verdict.RATIFIED  # type: ignore[union-attr]


async def test_an_ended_meetings_decision_is_indexed_for_recall_once_and_a_ruling_keeps_it(board: Board) -> None:
    first = await meeting(board)
    second = await meeting(board, "Should we cut prices?")
    await say(board, f"/veto {second} margins are thin")
    await board.parts.room.store.finish(first, stop_reason="completed", cost_usd=0.0,  # recorded again: re-indexed once
                                  decision={"recommendation": "Start small in Berlin"}, minutes="again")
    rows = await board.parts.db.fetchall("SELECT meeting_id, topic, recommendation FROM decision_search ORDER BY topic")
    assert [(r["meeting_id"], r["topic"], r["recommendation"]) for r in rows] == [
        (second, "Should we cut prices?", rows[0]["recommendation"]),
        (first, "Should we expand to Europe?", "Start small in Berlin")]
    assert rows[0]["recommendation"]  # the decision's own words


async def test_two_rulings_at_once_change_the_decision_once(board: Board) -> None:
    first = await meeting(board)
    veto = Ruling(Verdict.VETOED, by="telegram:1", via="telegram", reason="too soon")
    revisit = Ruling(Verdict.REVISIT, by="whatsapp:1", via="whatsapp", reason="new facts")
    results = await asyncio.gather(*(board.parts.decisions.rule(first, r) for r in (veto, revisit, veto, revisit)))
    assert sorted(r.outcome.value for r in results).count(Outcome.DONE.value) == 1  # the rest: already / final
    assert len(await board.parts.decisions.rulings(first)) == 1

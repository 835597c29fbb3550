"""Reviews of decisions (issue 27): ``/review <id> <when>`` and ``board.meetings.review_after_days``
schedule a review; when it is due (the schedule's runner on a fake clock) a short meeting looks back
at the decision in the place it was made, its chair's verdict (kept / reversed / superseded) is
recorded on the decision once, and a later meeting recalls it. The offline model plays one too (and
its members' predictions are asked to be resolved, with buttons, in the meeting's topic)."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path

import pytest

from board.app import Board
from board.clock import FakeClock
from board.decisions.recall.reviews import ReviewStore
from board.decisions.recall.search import related_decisions
from board.envelope import Envelope
from board.llm.base import LLMRequest
from board.schedule import ScheduleRunner
from board.storage import Database
from tests.support.board import on_both_backends, open_board, schema_of
from tests.support.calibration import T0, predicting_board, predicting_model
from tests.support.fakes.scripted_model import ScriptedModel, Step, say
from tests.support.schedule import RecordingDeliver

OWNER_TOPIC = dict(channel="telegram", sender="42", chat_id="-100500", thread_id=7, is_owner=True)
VERDICT = {"verdict": "reversed", "summary": "The German pilot missed its target; the board reverses it."}


def _reviewing_model() -> ScriptedModel:
    base = predicting_model([])
    assert callable(base.default)

    def answer(request: LLMRequest) -> Step | str:
        schema = schema_of(request)
        if schema is not None and "verdict" in schema.get("properties", {}):
            return say(json.dumps(VERDICT))
        return base.default(request)  # type: ignore[operator,no-any-return]

    return ScriptedModel(default=answer)


async def _board(workspace: Path, data_dir: Path, model: ScriptedModel, clock: FakeClock, **meetings: float) -> Board:
    return await predicting_board(workspace, data_dir, model, clock, max_turns_per_agent=1, **meetings)  # type: ignore[arg-type]


async def _say(board: Board, text: str, **who: object) -> str:
    return (await board.handle(Envelope(text=text, **{**OWNER_TOPIC, **who}))).text  # type: ignore[arg-type]


@on_both_backends
async def test_a_scheduled_review_holds_one_short_meeting_and_records_its_verdict(workspace: Path,
                                                                                  data_dir: Path) -> None:
    clock = FakeClock(T0)
    model = _reviewing_model()
    board = await _board(workspace, data_dir, model, clock)
    deliver = RecordingDeliver()
    runner = ScheduleRunner(board.parts.schedule, deliver)
    try:
        decided = (await board.parts.room.hold("Should we pilot in Germany?",
                                         envelope=Envelope(text="", **OWNER_TOPIC))).meeting_id  # type: ignore[arg-type]
        answer = await _say(board, f"/review {decided} +3d")
        assert "scheduled for Sat 2026-11-28 09:00 UTC" in answer, answer
        assert await runner.run_due() == 0  # not due yet
        clock.advance(days=3, seconds=1)
        model.requests.clear()
        assert await runner.run_due() == 1
        await board.parts.room.drain(30)
        reviews = await ReviewStore(board.parts.db).of_decision(decided)
        assert len(reviews) == 1 and reviews[0].verdict == "reversed" and reviews[0].review_meeting_id
        assert reviews[0].summary == VERDICT["summary"]
        review_meeting = await board.parts.room.store.get(reviews[0].review_meeting_id or "")
        assert review_meeting is not None and review_meeting.topic.startswith(f"Review of decision {decided}")
        agenda = review_meeting.agenda or ""
        assert '"Pilot in Germany first"' in agenda and "actions 0 done, 3 open" in agenda
        assert "kept, reversed or superseded" in agenda
        rounds = await board.parts.db.fetchall("SELECT DISTINCT round FROM meeting_statements WHERE meeting_id = ?",
                                         (review_meeting.id,))
        assert [r["round"] for r in rounds] == [1]  # a short meeting: one round
        assert review_meeting.decision is not None  # and it decided
        # the runner saw the row through once; running the handler again (a crash before "done") starts nothing
        row = await board.parts.schedule.get(f"review:decision:{decided}")
        assert row is not None and row.status == "done"
        handler = board.parts.schedule.handler("review")
        assert handler is not None and await handler(row) is None
        assert len(await board.parts.room.store.list(10)) == 2
        assert "reversed" in await _say(board, f"/review {decided}")
        assert await runner.run_due() == 1  # the verdict, told once in the topic the review was held in
        assert await runner.run_due() == 0
        told = [reply for key, reply in deliver.sent if key.startswith("review:verdict:")]
        assert len(told) == 1 and "is REVERSED" in told[0].text and VERDICT["summary"] in told[0].text
        assert (told[0].chat_id, told[0].thread_id) == ("-100500", 7)
        found = await related_decisions(board.parts.db, "Germany pilot", exclude=None)
        assert any(d.meeting_id == decided and d.review and d.review.startswith("reversed") for d in found)
    finally:
        await board.close()


@on_both_backends
async def test_review_after_days_schedules_a_review_of_every_decision(workspace: Path, data_dir: Path) -> None:
    clock = FakeClock(T0)
    board = await _board(workspace, data_dir, _reviewing_model(), clock, review_after_days=14)
    try:
        decided = (await board.parts.room.hold("Should we pilot in Germany?",
                                         envelope=Envelope(text="", **OWNER_TOPIC))).meeting_id  # type: ignore[arg-type]
        row = await board.parts.schedule.get(f"review:decision:{decided}")
        assert row is not None and row.due_at == T0 + timedelta(days=14)
        assert (row.place.channel, row.place.chat_id, row.place.thread_id) == ("telegram", "-100500", 7)
    finally:
        await board.close()


@on_both_backends
async def test_review_bad_input_changes_nothing(workspace: Path, data_dir: Path) -> None:
    board = await _board(workspace, data_dir, _reviewing_model(), FakeClock(T0))
    try:
        decided = (await board.parts.room.hold("Should we pilot in Germany?",
                                         envelope=Envelope(text="", **OWNER_TOPIC))).meeting_id  # type: ignore[arg-type]
        assert "I can't read 'soonish' as a date" in await _say(board, f"/review {decided} soonish")
        assert "which has passed" in await _say(board, f"/review {decided} 2026-01-01")
        assert "No decided meeting 'm-nope'" in await _say(board, "/review m-nope +3d")
        assert "owner" in await _say(board, f"/review {decided} +3d", sender="43", is_owner=False)
        assert await board.parts.schedule.get(f"review:decision:{decided}") is None
        assert "No review of" in await _say(board, f"/review {decided}")
        assert "in 2 weeks" in await _say(board, "/review")
    finally:
        await board.close()


@on_both_backends
async def test_the_offline_model_plays_a_review(workspace: Path, data_dir: Path) -> None:
    from board.agent.runner import AgentSettings
    from board.app import BoardSettings
    from board.roles import RosterSpec
    from board.room.consult import ConsultSettings
    from board.room.meeting import MeetingSettings

    clock = FakeClock(T0)
    settings = BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
                             agent=AgentSettings(default_model="offline"),
                             meetings=MeetingSettings(max_turns_per_agent=1), consultation=ConsultSettings())
    board = await open_board(settings, clock=clock)
    try:
        decided = (await board.parts.room.hold("Should we pilot in Germany?",
                                         envelope=Envelope(text="", **OWNER_TOPIC))).meeting_id  # type: ignore[arg-type]
        await _say(board, f"/review {decided} +1h")
        clock.advance(days=1, seconds=1)  # the review is due, and the predictions' resolve-by date (tomorrow) came
        deliver = RecordingDeliver()
        await ScheduleRunner(board.parts.schedule, deliver).run_due()
        await board.parts.room.drain(60)
        requests = [reply for key, reply in deliver.sent if key.startswith("resolution:")]
        assert len(requests) == 5 and all("Time to check a prediction" in r.text for r in requests)
        assert all("by 2026-11-26" in r.text for r in requests)  # the day after the meeting
        assert all([b.label for b in r.buttons] == ["Yes", "No", "Can't tell"] for r in requests)
        assert all((r.chat_id, r.thread_id) == ("-100500", 7) for r in requests)  # where the meeting ran
        reviews = await ReviewStore(board.parts.db).of_decision(decided)
        assert reviews and reviews[0].verdict in ("kept", "reversed", "superseded", "unclear")
        assert reviews[0].summary and "[offline]" in reviews[0].summary
    finally:
        await board.close()


@on_both_backends
async def test_review_dates_are_read_like_due_dates_in_the_boards_time_zone(workspace: Path, data_dir: Path) -> None:
    """fix27: /review had its own weaker reader (no "in two weeks", no "friday", UTC only, +0m accepted,
    an OverflowError for +99999999999d); it reads dates like /due now."""
    from datetime import UTC, datetime

    from tests.support.reminders import board_on, hold_meeting, say_to, scripted
    from tests.support.schedule import START

    board = await board_on(workspace, data_dir, scripted((None, None, None)), FakeClock(START),
                           timezone="America/New_York")
    try:
        await hold_meeting(board)
        mid = (await board.parts.decisions.recent(limit=1))[0].meeting_id
        key = f"review:decision:{mid}"
        assert "too far ahead: give at most ten years" in await say_to(board, f"/review {mid} +99999999999d")
        assert "I can't read '+0m' as a date" in await say_to(board, f"/review {mid} +0m")
        assert await board.parts.schedule.get(key) is None
        said = await say_to(board, f"/review {mid} in two weeks")
        assert "scheduled for Wed 2026-12-09 04:00 America/New_York" in said, said
        said = await say_to(board, f"/review {mid} friday")
        assert "scheduled for Fri 2026-11-27 09:00 America/New_York" in said, said
        work = await board.parts.schedule.get(key)
        assert work is not None and work.due_at == datetime(2026, 11, 27, 14, tzinfo=UTC)
    finally:
        await board.close()


@on_both_backends
async def test_resolution_requests_go_out_when_the_resolve_by_date_begins_in_the_boards_zone(
        workspace: Path, data_dir: Path) -> None:
    """fix27: they went out at 00:00 UTC on the resolve-by date whatever board.timezone said."""
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    from board.decisions.predictions.resolving import schedule_resolutions
    from board.envelope import Envelope
    from board.schedule import WorkKind
    from tests.support.calibration import predicting_model, seed

    await seed(workspace, data_dir, Envelope(channel="telegram", text="", sender="42", chat_id="42", is_owner=True))
    board = await predicting_board(workspace, data_dir, predicting_model([]), FakeClock(T0))
    try:
        utc_rows = await board.parts.schedule.store.open_rows(kind=WorkKind.RESOLUTION)
        assert datetime(2026, 12, 1, tzinfo=UTC) in {r.due_at for r in utc_rows}  # a UTC board: midnight UTC
        await board.parts.db.execute("DELETE FROM scheduled_work WHERE kind = 'resolution'")
        added = await schedule_resolutions(board.parts.schedule, board.parts.db, zone=ZoneInfo("America/New_York"))
        rows = await board.parts.schedule.store.open_rows(kind=WorkKind.RESOLUTION)
        assert added == len(rows) == len(utc_rows)
        assert {r.due_at for r in rows} == {r.due_at + timedelta(hours=5) for r in utc_rows}  # EST is UTC-5
    finally:
        await board.close()


@pytest.mark.backends
async def test_reviews_planned_at_once_make_one_pending_review(database: Database) -> None:
    await database.execute("INSERT INTO meetings(id, topic, roster, chair, status, started_at) "
                           "VALUES ('m-1', 'Prices', 'board', 'general', 'ended', '2026-11-25T09:00:00+00:00')")
    store = ReviewStore(database)
    dues = [T0 + timedelta(days=n) for n in range(1, 7)]
    planned = await asyncio.gather(*(store.plan("m-1", due, T0) for due in dues))  # six replicas' /review at once
    assert len({p.id for p in planned}) == 1
    [review] = await store.of_decision("m-1")
    assert review.due_at in {d.isoformat(timespec="seconds") for d in dues}

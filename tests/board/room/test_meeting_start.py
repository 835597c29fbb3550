"""A meeting over ``board.meetings.confirm_over_usd`` waits for Start (board.room.pending), on a fake clock
and either backend: the question with Start / Cancel is posted by the schedule; after a day nobody pressed, it
expires with a line in its place and a late Start changes nothing; the chair's ``convene_meeting`` tool tells
the model that the meeting waits for the owner's Start; no model call is made for a waiting meeting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.clock import FakeClock
from board.envelope import Envelope
from board.llm.pricing import ModelPrice, PriceTable
from board.roles import RosterSpec
from board.room.meeting import MeetingSettings
from board.schedule import ScheduleRunner
from tests.support.board import on_both_backends, open_board
from tests.support.fakes.scripted_model import ScriptedModel, call, say
from tests.support.llm import FAST_RETRY
from tests.support.schedule import RecordingDeliver

T0 = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
OWNER = dict(channel="telegram", sender="42", chat_id="-100500", thread_id=7, is_owner=True)


async def _board(workspace: Path, data_dir: Path, model: ScriptedModel, clock: FakeClock) -> Board:
    settings = BoardSettings(
        workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
        agent=AgentSettings(default_model="scripted:main", retry=FAST_RETRY,
                            prices=PriceTable({"scripted:main": ModelPrice(input=3.0, output=15.0)})),
        meetings=MeetingSettings(confirm_over_usd=0.01))
    return await open_board(settings, model.registry(), clock=clock)


async def _say(board: Board, text: str, **who: object) -> str:
    return (await board.handle(Envelope(text=text, **{**OWNER, **who}))).text  # type: ignore[arg-type]


@on_both_backends
async def test_a_waiting_meeting_expires_after_a_day_with_a_line_and_nothing_spent(workspace: Path,
                                                                                   data_dir: Path) -> None:
    clock = FakeClock(T0)
    model = ScriptedModel()
    board = await _board(workspace, data_dir, model, clock)
    deliver = RecordingDeliver()
    runner = ScheduleRunner(board.parts.schedule, deliver)
    try:
        answer = await _say(board, "/meeting Should we open a Pune office?")
        assert "waits for your Start (request 1)" in answer and "Expected: about $" in answer, answer
        assert await runner.run_due() == 1  # the question, posted in the place it was called from
        [(key, ask)] = deliver.sent
        assert key == "meeting_start:ask:1" and (ask.chat_id, ask.thread_id) == ("-100500", 7)
        assert [b.command for b in ask.buttons] == ["/start_meeting 1", "/cancel_meeting 1"]
        assert "Tokens per call, defaults" in ask.text and "scripted:main: $3 in / $15 out" in ask.text
        assert "expires at 2026-11-26 09:00 UTC" in ask.text
        assert "is for the board's owner only" in await _say(board, "/start_meeting 1", is_owner=False)

        clock.advance(hours=23)
        assert await runner.run_due() == 0  # not yet
        clock.advance(hours=1, seconds=1)
        assert await runner.run_due() == 1
        expired = deliver.sent[-1][1]
        assert expired.text.startswith("Meeting request 1 (\u201cShould we open a Pune office?\u201d) expired: nobody "
                                       "pressed Start within a day; nothing was spent.")
        assert "is expired; nothing changed" in await _say(board, "/start_meeting 1")
        assert "There is no meeting request 9" in await _say(board, "/start_meeting 9")
        assert "Say which meeting request" in await _say(board, "/start_meeting")
        assert model.requests == []  # nothing spent: no model call at all
        assert await board.parts.room.store.list(5) == []
    finally:
        await board.close()


@on_both_backends
async def test_the_chairs_tool_tells_the_model_the_meeting_waits_for_the_owners_start(workspace: Path,
                                                                                      data_dir: Path) -> None:
    clock = FakeClock(T0)
    model = ScriptedModel()
    model.script(call("convene_meeting", {"topic": "Should we open a Pune office?"}),
                 say("It waits for your Start."), role="general")
    board = await _board(workspace, data_dir, model, clock)
    try:
        await _say(board, "@general please hold a board meeting on opening a Pune office")
        [told] = [m.content for m in model.requests[-1].request.messages if m.role == "tool"]
        assert "waiting for the owner's Start" in told and "has NOT started" in told and "Expected: about $" in told
        assert len(model.requests) == 2  # the chair's turn only: no member was asked
        row = await board.parts.room.gate.starts.get(1) if board.parts.room.gate else None
        assert row is not None and row.status == "waiting" and row.topic == "Should we open a Pune office?"
        assert timedelta(days=1) == board.parts.room.gate.expire_after if board.parts.room.gate else False
    finally:
        await board.close()


@on_both_backends
async def test_a_start_cut_off_before_its_meeting_began_is_started_by_the_next_press(workspace: Path,
                                                                                    data_dir: Path) -> None:
    """Security review finding 3: Start claims the request (started, no meeting yet), then starts the meeting.
    Killed between the two, the replayed press was told "already started; nothing changed" and no meeting ever
    began. A claim left without a meeting for a minute is taken back, and the press starts it."""
    clock = FakeClock(T0)
    model = ScriptedModel(default=say("Noted."))
    board = await _board(workspace, data_dir, model, clock)
    try:
        answer = await _say(board, "/meeting Should we open a Pune office?")
        assert "waits for your Start (request 1)" in answer, answer
        await board.parts.db.execute(  # what a kill right after the claim leaves behind
            "UPDATE meeting_starts SET status = 'started', decided_by = 'telegram:42', decided_at = ? WHERE id = 1",
            ((T0 - timedelta(minutes=5)).isoformat(timespec="seconds"),))
        pressed = await _say(board, "/start_meeting 1")
        await board.parts.room.drain(60)
        [row] = await board.parts.db.fetchall("SELECT status, meeting_id FROM meeting_starts WHERE id = 1")
    finally:
        await board.close()
    assert "Starting the board meeting" in pressed, pressed
    assert row["status"] == "started" and row["meeting_id"]

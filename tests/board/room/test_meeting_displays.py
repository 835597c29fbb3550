"""A meeting's displays: each subscriber on a lane of its own, and the gate that keeps posts off the critical path.

A slow subscriber (the decision's record written to six sessions, a review scheduled at the end) used to hold
every other display back, event by event: the channels' views were told of the decision only once the slowest
bookkeeping had finished. :mod:`board.room.meeting.pace` says when a meeting waits on its models, the moment a
display (a forum meeting's posts) may spend its CPU without delaying the next round's calls.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from board.room.meeting import MeetingEvent, MeetingEventKind, MeetingSettings, StopReason
from board.room.meeting.pace import Pace
from board.room.subscribers import Bookkeeping, ToldAtOnce, ToldFirst
from tests.board.room.test_meeting import brain, meeting_board
from tests.support.fakes.scripted_model import ScriptedModel

pytestmark = [pytest.mark.backends, pytest.mark.usefixtures("boards_on_backend")]

#: bounds a wait that only a regression makes endless (the old herald: the meeting never ends), never met otherwise
DEADLOCK_S = 120.0


async def test_a_slow_subscriber_holds_up_no_other_display(workspace: Path, data_dir: Path) -> None:
    """The slow subscriber is still busy with the decision when the other one is told the meeting ended; each
    hears every event, in the meeting's order; the meeting's result comes once both have heard everything."""
    model = ScriptedModel(default=brain())
    ended_elsewhere = asyncio.Event()
    slow: list[str] = []
    fast: list[str] = []

    async def slow_subscriber(event: MeetingEvent) -> None:
        slow.append(event.kind)
        if event.kind == MeetingEventKind.DECISION:
            await ended_elsewhere.wait()  # busy until another display has been told the end

    async def fast_subscriber(event: MeetingEvent) -> None:
        fast.append(event.kind)
        if event.kind == MeetingEventKind.ENDED:
            ended_elsewhere.set()

    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=2)) as board:
        result = await asyncio.wait_for(board.parts.room.hold(
            "Expand to Europe?", extra_subscribers=[slow_subscriber, fast_subscriber]), DEADLOCK_S)
    assert result.stop_reason is StopReason.COMPLETED
    assert fast == slow  # both heard all of it, in the same (the meeting's) order
    assert fast[0] == MeetingEventKind.STARTED and fast[-2:] == [MeetingEventKind.DECISION, MeetingEventKind.ENDED]


async def test_a_background_meeting_returns_before_its_bookkeeping_which_is_marked_done_after(
        workspace: Path, data_dir: Path) -> None:
    """meet46: a Bookkeeping subscriber busy with the end holds up neither the meeting's return nor its displays;
    the durable mark is set only once it is done (a kill before that: the next start does it)."""
    model = ScriptedModel(default=brain())
    let_go = asyncio.Event()
    shown: list[str] = []

    async def keeper(event: MeetingEvent) -> None:
        if event.kind == MeetingEventKind.ENDED:
            await let_go.wait()

    async def display(event: MeetingEvent) -> None:
        shown.append(event.kind)

    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1)) as board:
        room = board.parts.room
        room.subscribe(Bookkeeping(keeper))
        room.subscribe(display)
        run = room.start("Expand to Europe?")
        await asyncio.wait_for(room.ended(run.id), DEADLOCK_S)  # returned while the keeper still holds the end
        assert shown[-1] == MeetingEventKind.ENDED
        [row] = await board.parts.db.fetchall("SELECT status, bookkept_at FROM meetings WHERE id = ?", (run.id,))
        assert (row["status"], row["bookkept_at"]) == ("ended", None)
        let_go.set()
        await asyncio.wait_for(room.bookkept(run.id), DEADLOCK_S)
        [row] = await board.parts.db.fetchall("SELECT bookkept_at FROM meetings WHERE id = ?", (run.id,))
        assert row["bookkept_at"] is not None
        assert await room.bookkeep_left() == []  # nothing left for a start to do


async def test_the_gate_opens_once_a_phase_is_asked_and_closes_when_its_last_answer_is_in() -> None:
    pace = Pace()
    assert pace.is_quiet  # nothing asked yet
    pace.phase(3)
    assert not pace.is_quiet  # the round's requests are being built: that is the critical path
    pace.asking()
    pace.asking()
    assert not pace.is_quiet
    pace.asking()
    assert pace.is_quiet  # all three wait on their models: a display may post
    pace.answered()
    pace.answered()
    assert pace.is_quiet  # one is still out: the meeting waits on it anyway
    pace.asking()  # a stance asked again
    pace.answered()
    assert pace.is_quiet
    pace.answered()
    assert not pace.is_quiet  # the round's end: its statements stored, the next requests built
    waiter = asyncio.ensure_future(pace.quiet(DEADLOCK_S))
    await asyncio.sleep(0)
    assert not waiter.done()
    pace.idle()  # paused: nothing of the meeting's runs
    await waiter
    pace.phase(1)
    assert not pace.is_quiet
    await pace.quiet(0.0)  # never longer than a display says
    pace.end()
    pace.phase(2)
    assert pace.is_quiet  # ended: for good


async def test_a_subscriber_told_first_is_done_with_each_event_before_the_displays_hear_it(
        workspace: Path, data_dir: Path) -> None:
    """The board dates a decision's action items in a subscriber told first (board.app.build: DecisionTrail.follow):
    a display told the decision finds it done, so a page never shows a due date as one it cannot read (seen: the
    web meeting page drawn between the decision and the dating said "not a date I can read")."""
    model = ScriptedModel(default=brain())
    dated: list[str] = []
    seen_by_display: list[list[str]] = []

    async def dating(event: MeetingEvent) -> None:
        if event.kind == MeetingEventKind.DECISION:
            await asyncio.sleep(0.05)  # slower than a display's turn of the loop
            dated.append(event.meeting_id)

    async def display(event: MeetingEvent) -> None:
        if event.kind == MeetingEventKind.DECISION:
            seen_by_display.append(list(dated))

    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=2)) as board:
        result = await asyncio.wait_for(board.parts.room.hold(
            "Expand to Europe?", extra_subscribers=[display, ToldFirst(dating)]), DEADLOCK_S)
    assert result.stop_reason is StopReason.COMPLETED
    assert seen_by_display == [[result.meeting_id]]


async def test_a_meeting_returns_without_waiting_for_the_subscriber_told_first_when_no_display_stands_on_it(
        workspace: Path, data_dir: Path) -> None:
    """meet47: the subscriber told first (the items dated) has a lane of its own; only the displays that stand on it
    wait for it (their lanes, event by event). A meeting whose displays all show what the events carry
    (:class:`ToldAtOnce`: the Telegram view) returns while it is still busy; the mark that the end's bookkeeping
    ran waits for it. A display that stands on it still finds it done (the test above)."""
    model = ScriptedModel(default=brain())
    let_go = asyncio.Event()
    shown: list[str] = []

    async def dating(event: MeetingEvent) -> None:
        if event.kind == MeetingEventKind.DECISION:
            await let_go.wait()

    async def display(event: MeetingEvent) -> None:
        shown.append(event.kind)

    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1)) as board:
        room = board.parts.room
        room.subscribers[:] = [s for s in room.subscribers if not isinstance(s, ToldFirst)]  # only the test's own
        room.subscribe(ToldFirst(dating))
        room.subscribe(ToldAtOnce(display))
        run = room.start("Expand to Europe?")
        returned = asyncio.ensure_future(room.ended(run.id))
        done, _ = await asyncio.wait([returned], timeout=DEADLOCK_S)  # only the old herald reaches the bound
        returned_while_dating = bool(done) and not let_go.is_set()
        let_go.set()
        await asyncio.wait_for(room.bookkept(run.id), DEADLOCK_S)
        [row] = await board.parts.db.fetchall("SELECT bookkept_at FROM meetings WHERE id = ?", (run.id,))
    assert returned_while_dating, "the meeting waited for the subscriber told first"
    assert shown[-2:] == [MeetingEventKind.DECISION, MeetingEventKind.ENDED]
    assert row["bookkept_at"] is not None

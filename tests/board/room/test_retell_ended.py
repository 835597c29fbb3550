"""At a start the displays that post from a record are told, once more, the end of each meeting that ended lately
(:meth:`board.room.convene.BoardRoom.retell_ended`): a ``kill -9`` between a meeting's end and its display's last
post leaves nothing unposted. The real room on the state db (SQLite and PostgreSQL), displays standing in for a
channel's meeting view. Through a real daemon and Telegram: ``tests/system/test_standing_every.py``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from board.app import Board
from board.envelope import Envelope
from board.room.meeting import MeetingEvent, MeetingEventKind
from board.room.subscribers import AGAIN, CatchesUp, ToldAtOnce
from tests.bot.channels.telegram.test_telegram_paths import DECISION

pytestmark = pytest.mark.backends


class Display:
    """A channel's meeting view as the room sees it: told events, posting from a record (or not, now)."""

    def __init__(self, keeps_record: bool = True) -> None:
        self.keeps_record = keeps_record
        self.told: list[MeetingEvent] = []

    def catches_up(self) -> bool:
        return self.keeps_record

    async def __call__(self, event: MeetingEvent) -> None:
        self.told.append(event)


def place() -> Envelope:
    return Envelope(channel="telegram", text="/meeting Pune?", sender="1", chat_id="-100", message_id="9",
                    is_group=True)


async def ended(board: Board, meeting_id: str, *, hours_ago: float = 0.0) -> None:
    store = board.parts.room.store
    origin = place()
    await store.create(meeting_id, "Pune?", "board", "general", place=origin, resume={"origin": {
        "channel": origin.channel, "chat_id": origin.chat_id, "sender": origin.sender, "text": origin.text,
        "message_id": origin.message_id, "is_group": origin.is_group}})
    await store.finish(meeting_id, stop_reason="completed", cost_usd=0.01, decision=DECISION,
                       minutes="# Minutes\n\nPilot in Pune.")
    if hours_ago:
        stamp = (datetime.now(UTC) - timedelta(hours=hours_ago)).isoformat(timespec="seconds")
        await board.parts.db.execute("UPDATE meetings SET ended_at = ? WHERE id = ?", (stamp, meeting_id))


async def test_the_displays_that_keep_a_record_are_told_the_end_of_each_meeting_that_ended_lately(
        board: Board) -> None:
    room = board.parts.room
    shown, wrapped, unrecorded, plain = Display(), Display(), Display(keeps_record=False), []

    async def bare(event: MeetingEvent) -> None:  # a subscriber that is no display of this kind (the web's feed)
        plain.append(event)

    for subscriber in (shown, ToldAtOnce(wrapped), unrecorded, bare):
        room.subscribe(subscriber)
    assert isinstance(shown, CatchesUp) and not isinstance(bare, CatchesUp)
    await ended(board, "m-late")  # ended before this start, within board.meetings.resume_within_s (an hour)
    await ended(board, "m-old", hours_ago=2)  # too long ago: what it missed is stale
    running = "m-running"
    await room.store.create(running, "Pune?", "board", "general", place=place())  # resumed instead, not told

    assert await room.retell_ended() == ["m-late"]
    for display in (shown, wrapped):
        assert [e.kind for e in display.told] == [MeetingEventKind.RESUMED, MeetingEventKind.DECISION,
                                                  MeetingEventKind.ENDED]
        assert all(e.meeting_id == "m-late" and e.data.get(AGAIN) for e in display.told)
        resumed, decision, end = display.told
        assert resumed.data["phase"] == "ended" and resumed.origin is not None
        assert (resumed.origin.channel, resumed.origin.chat_id) == ("telegram", "-100")  # where it is shown
        assert decision.data["decision"]["recommendation"] == DECISION["recommendation"]
        assert end.data["minutes"] == "# Minutes\n\nPilot in Pune." and end.data["stop_reason"] == "completed"
    assert unrecorded.told == [] and plain == []  # without a record a display would post all of it again


async def test_a_meeting_this_process_held_is_not_told_again(board: Board) -> None:
    room = board.parts.room
    display = Display()
    room.subscribe(display)
    result = await room.hold("Pune?", envelope=place())  # held here, to its end: the display heard it live
    live = len(display.told)
    assert live and display.told[-1].kind == MeetingEventKind.ENDED
    assert await room.retell_ended() == []
    assert len(display.told) == live
    assert result.meeting_id not in await room.retell_ended()

"""A meeting called from WhatsApp shows the same sequence as the other places, in WhatsApp's terms: each round's
statements in one message (split between statements only over the 4096-character limit), then the decision, then
the minutes. A real in-process daemon with the WhatsApp channel, signed webhooks, the fake Graph API, the offline
board held to two rounds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from board.app import Board, BoardSettings
from board.envelope import Envelope
from board.roles import RosterSpec
from board.room.meeting import MeetingEvent, MeetingEventKind, MeetingSettings
from bot.channels.meeting_posts import MeetingPosts, PostMark
from bot.channels.whatsapp.meeting import round_messages
from tests.bot.channels.whatsapp import test_whatsapp
from tests.bot.channels.whatsapp.test_whatsapp import Start
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.telegram import eventually
from tests.support.whatsapp import OWNER, text_notification

start = test_whatsapp.start  # the in-process daemon with the WhatsApp channel
fake = test_whatsapp.fake


@pytest.fixture
def settings(workspace: Path, data_dir: Path) -> BoardSettings:
    """The offline board, its meetings held to two rounds."""
    return BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
                         meetings=MeetingSettings(max_turns_per_agent=2))


async def test_a_meeting_sends_each_round_in_one_message_then_the_decision_then_the_minutes(
    start: Start, board: Board, fake: FakeGraphAPI
) -> None:
    run = await start()
    assert await run.post(text_notification(OWNER, "/meeting should we raise prices?")) == 200
    await eventually(lambda: any(s.body.startswith("*Minutes*") for s in fake.sent), "the minutes", timeout=60)
    bodies = [s.body for s in fake.sent]
    assert "Convening the board" in bodies[0]
    [meeting] = await board.parts.room.store.list(1)
    said = (await board.parts.room.store.details(meeting.id))["statements"]
    rounds = sorted({int(r["round"]) for r in said})
    assert rounds == [1, 2]  # held to two rounds
    round_bodies = [b for b in bodies if b.startswith("*Round ")]
    assert [b.split("*", 2)[1] for b in round_bodies] == [f"Round {n}" for n in rounds]  # one message per round
    for n, body in zip(rounds, round_bodies, strict=True):
        mine = [r for r in said if int(r["round"]) == n]
        where = [body.index(r["text"].split("\n")[0][:60]) for r in mine]  # every statement, in speaking order
        assert where == sorted(where), body
    decision = next(i for i, b in enumerate(bodies) if b.startswith("*Board decision*"))
    minutes = next(i for i, b in enumerate(bodies) if b.startswith("*Minutes*"))
    assert bodies.index(round_bodies[-1]) < decision < minutes
    assert "*Recommendation:*" in bodies[decision] and "**" not in bodies[decision]
    assert all(s.to == OWNER for s in fake.sent)
    assert all(len(b) <= 4096 for b in bodies)


def test_a_round_over_the_limit_is_split_between_statements_and_only_a_giant_statement_is_cut() -> None:
    short = [(f"Role {i}", f"Statement {i}. " + "word " * 300) for i in range(4)]  # about 1.5 k each
    bodies = round_messages("Pune?", 2, short)
    assert len(bodies) == 2 and all(len(b) <= 4096 for b in bodies)
    assert bodies[0].startswith("*Round 2* of the meeting on \u201cPune?\u201d")
    assert bodies[1].startswith("*Round 2* (2)")
    for i in range(4):  # each statement whole, in one message
        assert sum(f"Statement {i}." in b for b in bodies) == 1
    giant = round_messages("Pune?", 1, [("A", "short."), ("B", "Long sentence here. " * 400)])
    assert all(len(b) <= 4096 for b in giant) and len(giant) >= 2
    assert "*A*\nshort." in giant[0]
    assert round_messages("Pune?", 1, [("A", "one"), ("B", "two")]) == [
        "*Round 1* of the meeting on \u201cPune?\u201d\n\n*A*\none\n\n*B*\ntwo"]


async def test_a_resumed_meeting_sends_its_rounds_from_the_record_and_nothing_twice(
    start: Start, board: Board, fake: FakeGraphAPI
) -> None:
    """The meeting package resumes a meeting after a restart (announcing ``resumed``, not what was finished):
    round 1 was stored and never sent, two members had spoken in round 2. Driven here through the relay the
    running channel subscribes, as the resumed meeting emits its events."""
    fake.answer_latency = 0.2  # Graph has a message before Sabha hears so (CI saw the mark still SENDING)
    run = await start()
    store, mid = board.parts.room.store, "m-wa-resumed"
    origin = Envelope(channel="whatsapp", text="/meeting Pune?", sender=OWNER, chat_id=OWNER, message_id="wamid.1")
    await store.create(mid, "Pune?", "board", "general", place=origin)
    roles = ("research", "content", "finance", "strategy", "critic")
    for role in roles:
        await store.statement(mid, 1, role, f"{role} says R1", model="offline", cost_usd=0)
    for role in roles[:2]:
        await store.statement(mid, 2, role, f"{role} says R2", model="offline", cost_usd=0)

    def said(kind: MeetingEventKind, **kw: Any) -> MeetingEvent:
        return MeetingEvent(kind=kind, meeting_id=mid, topic="Pune?", origin=origin, **kw)

    relay = run.channel.meetings
    await relay(said(MeetingEventKind.RESUMED, round=2, role="general", text="resumed at round 2",
                     data={"phase": "round 2"}))
    for role in roles[2:]:
        await relay(said(MeetingEventKind.AGENT_SPOKE, round=2, role=role, name=role.title(), text=f"{role} says R2"))
    await relay(said(MeetingEventKind.ROUND_DONE, round=2))
    await eventually(lambda: sum(s.body.startswith("*Round ") for s in fake.sent) == 2, "both rounds")
    first, second = [s.body for s in fake.sent if s.body.startswith("*Round ")]
    assert first.startswith("*Round 1*") and all(f"{r} says R1" in first for r in roles)
    assert second.startswith("*Round 2*") and all(f"{r} says R2" in second for r in roles)  # both lives' statements
    assert [second.index(f"{r} says R2") for r in roles] == sorted(second.index(f"{r} says R2") for r in roles)
    # a second restart at the synthesis: both rounds are recorded as sent, nothing is sent again
    await relay(said(MeetingEventKind.RESUMED, round=2, role="general", text="resumed at synthesis",
                     data={"phase": "synthesis"}))
    await relay(said(MeetingEventKind.ENDED, role="general", text="completed",
                     data={"stop_reason": "completed", "minutes": "# Minutes\n\nPhased."}))
    await eventually(lambda: any(s.body.startswith("*Minutes*") for s in fake.sent), "the minutes")
    assert sum(s.body.startswith("*Round ") for s in fake.sent) == 2
    posts = MeetingPosts(board.parts.db, "whatsapp")

    async def all_sent() -> bool:  # each is marked sent once Graph's answer is back, a moment after it has the text
        marks = await posts.of(mid, OWNER)
        return {marks[k].mark for k in ("round:1:0", "round:2:0", "minutes:0")} == {PostMark.SENT}

    await eventually(all_sent, "every post marked sent")
    assert sum(s.body.startswith("*Round ") for s in fake.sent) == 2

"""Contract: every send path delivers to the chat and topic the question came from, and
meeting output lands in the specialists' topics and General. Real PTB against the fake."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from board.app import Board
from board.envelope import Envelope, Reply
from board.room.meeting import MeetingEvent
from bot.channels.telegram.channel import ANSWER_FAILED, TEXT_ONLY
from tests.support.board import decision_record
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import (
    FORUM,
    OWNER,
    SPECIALISTS,
    running,
    tg_settings,
)


def photo_update(fake: FakeTelegramAPI, chat_id: int, thread: int | None) -> dict[str, Any]:
    update = fake.build_text_update(chat_id, OWNER, "placeholder", thread_id=thread)
    message = update["message"]
    del message["text"]
    message.pop("entities", None)
    message["photo"] = [{"file_id": "p1", "file_unique_id": "u1", "width": 10, "height": 10}]
    return update


def dice_update(fake: FakeTelegramAPI, chat_id: int, thread: int | None) -> dict[str, Any]:
    """Something Sabha does not read (a photo was, until issue 24)."""
    update = photo_update(fake, chat_id, thread)
    del update["message"]["photo"]
    update["message"]["dice"] = {"emoji": "🎲", "value": 3}
    return update


PATHS = ["answer", "command", "error", "unknown_command", "meeting_reply", "not_text", "media", "crash"]


@pytest.mark.parametrize("where", ["topic", "general", "dm"])
@pytest.mark.parametrize("path", PATHS)
async def test_every_send_path_keeps_the_place(
    board: Board, fake: FakeTelegramAPI, monkeypatch: pytest.MonkeyPatch, path: str, where: str
) -> None:
    real_handle = board.handle

    async def handle(envelope: Envelope, **given: Any) -> Reply:
        if envelope.text == "boom":
            raise RuntimeError("the model exploded")
        return await real_handle(envelope, **given)

    monkeypatch.setattr(board, "handle", handle)
    async with running(board, tg_settings(fake), status_interval=0.05) as channel:
        thread = channel.topics.thread_for("finance") if where == "topic" else None  # type: ignore[union-attr]
        chat = OWNER if where == "dm" else FORUM
        texts = {"answer": "what is our runway?", "command": "/roles", "error": "/ask nobody hello",
                 "unknown_command": "/frobnicate", "meeting_reply": "/meeting expand to Europe", "crash": "boom"}
        if path == "not_text":
            fake.push_update(dice_update(fake, chat, thread))
        elif path == "media":  # a photo Telegram no longer has: the sender is told, in the same place
            fake.push_update(photo_update(fake, chat, thread))
        else:
            fake.push_text(chat, OWNER, texts[path], thread_id=thread)
        if path == "meeting_reply":  # the meeting's own posts may come first: the reply is the one convening it
            await fake.wait_until(lambda: any("Convening the board" in m.text for m in fake.sent_messages),
                                  "the reply")
            sent = next(m for m in fake.sent_messages if "Convening the board" in m.text)
        else:
            [sent] = await fake.wait_for_messages(1)
        await asyncio.sleep(0.05)
    if path != "meeting_reply":  # a started meeting posts more (see the meeting tests)
        assert len(fake.sent_messages) == 1
    assert sent.chat_id == chat
    assert sent.message_thread_id == thread
    if where == "general":
        assert "message_thread_id" not in sent.params
    if path == "not_text":
        assert sent.text == TEXT_ONLY
    if path == "media":
        assert "Telegram no longer has a picture" in sent.text
    if path == "crash":
        assert ANSWER_FAILED in sent.text
    if path in ("error", "unknown_command"):
        assert "nobody" in sent.text or "/help" in sent.text


# -- meeting output ---------------------------------------------------------------------------


def event(kind: str, origin: Envelope, *, role: str | None = None, text: str = "", round_: int | None = None,
          **data: Any) -> MeetingEvent:
    names = {"general": ("General", "🧭"), "finance": ("Finance", "💰"), "critic": ("Critic", "🦉"),
             "research": ("Research", "🔬"), "content": ("Content", "📣"), "strategy": ("Strategy", "♟️")}
    name, emoji = names.get(role or "", (None, None))
    return MeetingEvent(kind=kind, meeting_id="m-test-1", topic="Expand to Europe?", origin=origin, round=round_,
                        role=role, name=name, emoji=emoji, text=text, data=data)


DECISION = decision_record(
    "Pilot in Germany first", "Lowest cost of entry with the largest market.",
    [("Size the German market", "research"), ("Model the pilot budget", "finance"),
     ("Draft the launch story", "content")],
    dissent=[{"who": "critic", "why": "Regulation risk is underestimated"}], best_effort=False)


def meeting_events(origin: Envelope) -> list[MeetingEvent]:
    events = [event("started", origin, role="general", text="Expand to Europe?", participants=list(SPECIALISTS)),
              event("framed", origin, role="general", text="Agenda: market, cost, story, risks")]
    events += [event("agent_spoke", origin, role=r, text=f"**{r}** view on Europe", round_=1) for r in SPECIALISTS]
    events += [event("disagreement", origin, role="critic", text="disagrees with finance on timing", round_=1),
               event("consensus", origin, role="finance", text="consensus on starting small", round_=1),
               event("round_done", origin, text="round 1 done", round_=1),
               event("decision", origin, role="general", text=DECISION["recommendation"], decision=DECISION),
               event("ended", origin, role="general", text="completed", stop_reason="completed", error=None,
                     minutes="# Minutes\n\n**Topic:** Expand to Europe?\n\nDecision: pilot in Germany.")]
    return events


async def test_meeting_posts_statements_in_topics_and_decision_in_general(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake), status_interval=0.05) as channel:
        assert channel.topics is not None
        threads = {r: channel.topics.thread_for(r) for r in SPECIALISTS}
        finance_topic = threads["finance"]
        origin = Envelope(channel="telegram", text="/meeting Expand to Europe?", sender=str(OWNER),
                          chat_id=str(FORUM), thread_id=finance_topic, message_id="9", is_group=True)
        for e in meeting_events(origin):
            await channel.meetings(e)
        await channel.meetings.drain(5)
    status, *rest = fake.sent_messages
    assert status.message_thread_id is None and "Board meeting" in status.text
    statements = {m.message_thread_id: m for m in rest if "board meeting, round" in m.text}
    assert set(statements) == set(threads.values())
    for role, thread in threads.items():
        assert f"{role} view on Europe" in statements[thread].text
    general = [m for m in rest if m.message_thread_id is None]
    assert [m.text.split("\n")[0] for m in general] == ["🏛 Board decision", "📝 Minutes"]
    assert "Pilot in Germany first" in general[0].text and "Model the pilot budget (finance)" in general[0].text
    assert "critic: Regulation risk" in general[0].text
    edits = fake.edited_messages
    assert all(e.message_id == status.message_id for e in edits)
    final = edits[-1].text if edits else status.text  # all events came at once: posted in its final state
    assert "ended (completed)" in final and "✅" in final
    assert "Disagreements: 1" in final


async def test_meeting_statement_for_a_deleted_topic_goes_to_general(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake), status_interval=0.05) as channel:
        assert channel.topics is not None
        gone = channel.topics.thread_for("critic")
        del fake.topics[FORUM][gone]  # someone deleted the Critic topic
        origin = Envelope(channel="telegram", text="/meeting x", sender=str(OWNER), chat_id=str(FORUM),
                          is_group=True)
        spoke = event("agent_spoke", origin, role="critic", text="risky", round_=1)
        for e in [*meeting_events(origin)[:2], spoke, meeting_events(origin)[-1]]:
            await channel.meetings(e)
        await channel.meetings.drain(5)
        assert channel.topics.thread_for("critic") is None  # forgotten: recreated at the next start
    critic = [m for m in fake.sent_messages if m.text.startswith("🦉 Critic")]
    assert [m.message_thread_id for m in critic] == [None]
    assert len(fake.created_topics) == len(SPECIALISTS)
    stored = await board.parts.db.fetchall("SELECT role FROM telegram_topics")
    assert "critic" not in {row["role"] for row in stored}


async def test_meeting_called_from_a_dm_reports_back_to_that_dm(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake), status_interval=0.05) as channel:
        origin = Envelope(channel="telegram", text="/meeting x", sender=str(OWNER), chat_id=str(OWNER))
        for e in meeting_events(origin):
            await channel.meetings(e)
        await channel.meetings.drain(5)
        other = Envelope(channel="console", text="/meeting y", sender="me")
        await channel.meetings(event("started", other, role="general", participants=["finance"]))
    assert {m.chat_id for m in fake.sent_messages} == {OWNER}
    assert all(m.message_thread_id is None for m in fake.sent_messages)
    assert [m.text.split("\n")[0] for m in fake.sent_messages][1:] == ["🏛 Board decision", "📝 Minutes"]
    assert not [m for m in fake.sent_messages if "board meeting, round" in m.text]


async def test_a_meeting_called_in_general_posts_into_the_topics_and_general(
    board: Board, fake: FakeTelegramAPI
) -> None:
    if not hasattr(board.parts, "room"):
        pytest.skip("this build has no board meetings (board.room)")
    async with running(board, tg_settings(fake), status_interval=0.05) as channel:
        assert channel.topics is not None
        threads = {r: channel.topics.thread_for(r) for r in SPECIALISTS}
        fake.push_text(FORUM, OWNER, "/meeting Should we expand to Europe next year?")
        [ack] = await fake.wait_for_messages(1)
        assert ack.message_thread_id is None and "Convening the board" in ack.text
        for _ in range(200):  # the meeting runs in the background; wait for its minutes
            if any(m.text.startswith("📝 Minutes") for m in fake.sent_messages):
                break
            await asyncio.sleep(0.05)
        await channel.meetings.drain(5)
    general = [m for m in fake.sent_messages if m.message_thread_id is None]
    heads = [m.text.split("\n")[0] for m in general]
    assert "🏛 Board decision" in heads and "📝 Minutes" in heads
    assert any("Board meeting" in m.text for m in general)  # the status message
    statements = [m for m in fake.sent_messages if "board meeting, round 1" in m.text]
    assert {m.message_thread_id for m in statements} == set(threads.values())
    for role, thread in threads.items():
        [first, *_] = [m for m in statements if m.message_thread_id == thread]
        assert first.text.startswith(f"{LABELS_BY_ROLE[role]} · board meeting")
    assert fake.edited_messages and "ended" in fake.edited_messages[-1].text
    status = next(m for m in general if "Board meeting" in m.text)
    assert "⏳ 💰 Finance" in status.text  # names from the souls before anyone spoke


LABELS_BY_ROLE = {"research": "🔬 Research", "content": "📣 Content", "finance": "💰 Finance",
                  "strategy": "♟️ Strategy", "critic": "🦉 Critic"}


async def test_meeting_status_shows_the_round_in_progress(board: Board, fake: FakeTelegramAPI) -> None:
    async with running(board, tg_settings(fake), status_interval=0.05) as channel:
        origin = Envelope(channel="telegram", text="/meeting x", sender=str(OWNER), chat_id=str(OWNER))
        events = meeting_events(origin)
        round_two = event("agent_spoke", origin, role="finance", text="round two view", round_=2)
        await channel.meetings(events[0])
        await fake.wait_for_messages(1)  # the status message; what follows edits it
        for e in [*events[1:10], round_two]:  # framed, round 1, round_done, round 2 starts
            await channel.meetings(e)
        for _ in range(100):
            if fake.edited_messages and "round 2" in fake.edited_messages[-1].text:
                break
            await asyncio.sleep(0.02)
        await channel.meetings(events[-1])
        await channel.meetings.drain(5)
    texts = [e.text for e in fake.edited_messages]
    assert any("Status: round 2: specialists answer" in t for t in texts), texts
    assert not any("Status: round 1 done" in t and "Round: 2" in t for t in texts), texts


@pytest.mark.parametrize("where", ["general", "dm"])
async def test_the_reply_to_meeting_comes_before_the_meetings_own_posts(
    board: Board, fake: FakeTelegramAPI, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The meeting task starts before the command's reply is sent; under load its status post used to
    reach the chat above "Convening the board" (seen failing these path tests on a busy machine).
    A slow delivery of the reply makes that certain: the meeting's first post must still wait for it."""
    async with running(board, tg_settings(fake), status_interval=0.05) as channel:
        real = channel.outbound.deliver

        async def slow_reply(reply: Reply, *, progress: Any = None) -> Any:
            await asyncio.sleep(1.0)  # Telegram slow to take the reply
            return await real(reply, progress=progress)

        monkeypatch.setattr(channel.outbound, "deliver", slow_reply)
        chat = OWNER if where == "dm" else FORUM
        fake.push_text(chat, OWNER, "/meeting expand to Europe")
        await fake.wait_until(lambda: len([m for m in fake.sent_messages if m.chat_id == chat]) >= 2,
                              "the reply and the meeting's first post", timeout=15)
    first = next(m for m in fake.sent_messages if m.chat_id == chat)
    assert "Convening the board" in first.text, [m.text[:40] for m in fake.sent_messages]

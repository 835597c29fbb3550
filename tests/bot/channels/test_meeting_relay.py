"""The channels' shared meeting relay names the channel it serves: a Slack meeting's undelivered message is logged
as ``slack: ...`` under ``sabha.slack`` (it said ``whatsapp:`` for every channel before), and each channel's text
(its markup, split and buttons) shapes the round's message. A message whose request was out when Sabha stopped is
sent once more headed as possibly repeated, never as a plain second copy."""

from __future__ import annotations

import logging

import pytest

from board.app import Board
from board.envelope import Button, Envelope
from board.room.meeting import MeetingEvent, MeetingEventKind
from bot.channels.meeting_posts import MeetingPosts, PostMark
from bot.channels.meeting_relay import MeetingRelay
from bot.channels.slack.meeting import SLACK_TEXT
from bot.channels.whatsapp.meeting import WHATSAPP_TEXT
from bot.intake.courier import ChannelTexts
from bot.intake.delivery import SendFailed, SendProgress
from tests.bot.channels.telegram.test_telegram_paths import DECISION

AGAIN = ChannelTexts().possibly_repeated


async def refuse(user: str, body: str, reply_to: str | None, buttons: tuple[Button, ...],
                 progress: SendProgress | None) -> None:
    raise SendFailed("channel_not_found")


@pytest.mark.parametrize(("channel", "text"), [("slack", SLACK_TEXT), ("whatsapp", WHATSAPP_TEXT)])
async def test_a_relay_s_log_lines_name_its_channel(channel: str, text: object, caplog: pytest.LogCaptureFixture,
                                                    ) -> None:
    relay = MeetingRelay(channel, refuse, text)  # type: ignore[arg-type]
    relay.start()
    origin = Envelope(channel=channel, text="/meeting Pune?", sender="U0OWNER", chat_id="C0BOARD/1.2",
                      message_id="C0BOARD/1.2")
    with caplog.at_level(logging.INFO):
        await relay(MeetingEvent(MeetingEventKind.AGENT_SPOKE, "m-1", "Pune?", origin, 1, "finance", "Finance",
                                 text="**Yes**, if rent < 2L."))
        await relay(MeetingEvent(MeetingEventKind.ROUND_DONE, "m-1", "Pune?", origin, 1))
        await relay.drain(5)
    [line] = [r for r in caplog.records if "not delivered" in r.getMessage()]
    assert line.name == f"sabha.{channel}" and line.getMessage().startswith(f"{channel}: a meeting message to ")
    assert not any(r.getMessage().startswith("whatsapp:") for r in caplog.records if channel == "slack")


def test_each_channel_writes_the_round_in_its_own_markup() -> None:
    from bot.channels.meeting_relay import round_messages

    said = [("Finance", "**Yes**, if rent < 2L.")]
    assert round_messages("Pune?", 1, said, SLACK_TEXT) == [
        "*Round 1* of the meeting on \u201cPune?\u201d\n\n*Finance*\n*Yes*, if rent &lt; 2L."]
    assert round_messages("Pune?", 1, said, WHATSAPP_TEXT) == [
        "*Round 1* of the meeting on \u201cPune?\u201d\n\n*Finance*\n*Yes*, if rent < 2L."]


@pytest.mark.parametrize(("channel", "text"), [("slack", SLACK_TEXT), ("whatsapp", WHATSAPP_TEXT)])
async def test_a_message_cut_off_while_being_sent_goes_once_more_headed_as_possibly_repeated(
        board: Board, channel: str, text: object) -> None:
    sent: list[tuple[str, tuple[Button, ...]]] = []

    async def send(user: str, body: str, reply_to: str | None, buttons: tuple[Button, ...],
                   progress: SendProgress | None) -> None:
        if progress is not None:
            await progress.leaving()
        sent.append((body, buttons))

    record = MeetingPosts(board.parts.db, channel)
    # the first life: the decision (one message, its buttons under it) was on its way when Sabha was killed
    await record.sending("m-1", "C0BOARD/1.2", "decision:buttons")
    relay = MeetingRelay(channel, send, text, record=record)  # type: ignore[arg-type]
    relay.start()
    origin = Envelope(channel=channel, text="/meeting Pune?", sender="U0OWNER", chat_id="C0BOARD/1.2",
                      message_id="C0BOARD/1.2")
    await relay(MeetingEvent(MeetingEventKind.DECISION, "m-1", "Pune?", origin, data={"decision": DECISION}))
    await relay.drain(5)
    assert sent and sent[0][0].startswith(f"{AGAIN}\n\n") and "Board decision" in sent[0][0], sent
    assert sent[-1][1] and not any(buttons for _, buttons in sent[:-1])  # the buttons under the last message
    assert not any(body.startswith("*Board decision*") for body, _ in sent)  # no plain second copy
    marks = await record.of("m-1", "C0BOARD/1.2")
    assert marks["decision:buttons"].mark is PostMark.SENT


@pytest.mark.parametrize(("channel", "text"), [("slack", SLACK_TEXT), ("whatsapp", WHATSAPP_TEXT)])
async def test_a_meeting_that_ended_with_messages_still_queued_sends_them_when_told_again_at_a_start(
        board: Board, channel: str, text: object) -> None:
    """Sabha was killed after the meeting ended, its round sent and its decision and minutes still queued: told the
    meeting again at the next start (``BoardRoom.retell_ended``), the relay sends the decision and the minutes, not
    the round; told it again after that, nothing. A meeting it never saw (held where it had no view) is left alone."""
    sent: list[str] = []

    async def send(user: str, body: str, reply_to: str | None, buttons: tuple[Button, ...],
                   progress: SendProgress | None) -> None:
        if progress is not None:
            await progress.leaving()
        sent.append(body)

    room, chat = board.parts.room, "C0BOARD/1.2"
    origin = Envelope(channel=channel, text="/meeting Pune?", sender="U0OWNER", chat_id=chat, message_id=chat)
    kept = {k: getattr(origin, k) for k in ("channel", "text", "sender", "chat_id", "message_id")}
    await room.store.create("m-1", "Pune?", "board", "general", place=origin, resume={"origin": kept})
    await room.store.statement("m-1", 1, "finance", "Yes, if rent < 2L.", model="offline", cost_usd=0.0)
    await room.store.finish("m-1", stop_reason="completed", cost_usd=0.0, decision=DECISION, minutes="Pilot in Pune.")
    await room.store.create("m-2", "Pune?", "board", "general", place=origin, resume={"origin": kept})
    await room.store.finish("m-2", stop_reason="completed", cost_usd=0.0, decision=DECISION, minutes="Not ours.")
    record = MeetingPosts(board.parts.db, channel)
    await record.sent("m-1", chat, "round:1:0", None)  # the first life sent round 1, then was killed
    relay = MeetingRelay(channel, send, text, room=room, record=record)  # type: ignore[arg-type]
    room.subscribe(relay)
    relay.start()
    assert sorted(await room.retell_ended()) == ["m-1", "m-2"]
    await relay.drain(5)
    assert [body.split("\n")[0] for body in sent] == ["*Board decision* on \u201cPune?\u201d", "*Minutes* (m-1)"], sent
    relay.start()
    assert sorted(await room.retell_ended()) == ["m-1", "m-2"]  # the next start: all of it was sent
    await relay.drain(5)
    assert len(sent) == 2, sent

"""The channels' shared meeting relay names the channel it serves: a Slack meeting's undelivered message is logged
as ``slack: ...`` under ``sabha.slack`` (it said ``whatsapp:`` for every channel before), and each channel's text
(its markup, split and buttons) shapes the round's message."""

from __future__ import annotations

import logging

import pytest

from board.envelope import Button, Envelope
from board.room.meeting import MeetingEvent, MeetingEventKind
from bot.channels.meeting_relay import MeetingRelay
from bot.channels.slack.meeting import SLACK_TEXT
from bot.channels.whatsapp.meeting import WHATSAPP_TEXT
from bot.intake.delivery import SendFailed, SendProgress


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

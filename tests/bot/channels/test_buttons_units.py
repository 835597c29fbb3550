"""Buttons in the channels, piece by piece: Telegram's keyboard under the last chunk of a long message and
its buttons changed later, a callback_query read into a command arrival, the toasts; WhatsApp's reply-button
message and a long text split so the buttons fit; the terminal's button line; the settled buttons."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from telegram import Bot

from board.commands.decisions import decision_buttons, settled_buttons
from board.decisions.ratify import DecisionRecord, Verdict
from board.envelope import Button, Envelope
from bot.channels.telegram.buttons import toast
from bot.channels.telegram.inbound import parse_update, press_envelope, quoted_message_id
from bot.channels.telegram.outbound import Outbound, Target
from bot.channels.telegram.ratelimit import FloodControl
from bot.channels.whatsapp.format import BUTTONS_BODY, MAX_BUTTON_BODY, button_message, split_text, with_buttons
from bot.cli.screen import button_line, with_button_line
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, TOKEN

BUTTONS = decision_buttons("m-20261125-120000-ab12")


@pytest.fixture
async def outbound(fake: FakeTelegramAPI) -> AsyncIterator[Outbound]:
    bot = Bot(TOKEN, base_url=fake.base_url)
    await bot.request.initialize()
    try:
        yield Outbound(bot, FloodControl())
    finally:
        await bot.request.shutdown()


async def test_telegram_buttons_go_under_the_last_chunk_and_can_be_changed(
    outbound: Outbound, fake: FakeTelegramAPI
) -> None:
    sent = await outbound.send(Target(OWNER), "word " * 1500, buttons=BUTTONS)  # two chunks
    assert len(sent) == 2
    assert fake.buttons_of(OWNER, sent[0].message_id) == []
    assert fake.buttons_of(OWNER, sent[1].message_id) == [("Ratify", "/ratify m-20261125-120000-ab12"),
                                                          ("Veto", "/veto m-20261125-120000-ab12"),
                                                          ("Revisit", "/revisit m-20261125-120000-ab12")]
    done = Button("✅ Ratified", "/decision m-20261125-120000-ab12")
    assert await outbound.edit_buttons(Target(OWNER), sent[1].message_id, (done,))
    assert fake.buttons_of(OWNER, sent[1].message_id) == [("✅ Ratified", "/decision m-20261125-120000-ab12")]
    assert await outbound.edit_buttons(Target(OWNER), sent[1].message_id, (done,))  # "not modified" counts as done
    assert await outbound.edit_buttons(Target(OWNER), sent[1].message_id, ())
    assert fake.buttons_of(OWNER, sent[1].message_id) == []
    assert not await outbound.answer_press("no-such-query", "hi")  # refused: logged, never raised


def test_a_callback_query_becomes_the_pressers_command_where_the_button_is(fake: FakeTelegramAPI) -> None:
    fake.messages[(-100123, 55)] = {"message_id": 55, "chat": {"id": -100123, "type": "supergroup"},
                                    "from": fake.bot_user, "date": 0, "text": "decision", "message_thread_id": 7,
                                    "is_topic_message": True,
                                    "reply_markup": {"inline_keyboard": [[{"text": "Ratify",
                                                                           "callback_data": "/ratify m-1"}]]}}
    update = parse_update(fake.build_press(-100123, 55, 43, "Ratify", query_id="q-1"))
    assert update.callback_query is not None
    envelope = press_envelope(update.callback_query, role_hint="finance", owner_id=42)
    assert envelope is not None
    assert (envelope.text, envelope.sender, envelope.chat_id, envelope.thread_id, envelope.is_owner) == (
        "/ratify m-1", "43", "-100123", 7, False)
    assert envelope.message_id == "55:cb:q-1" and quoted_message_id(envelope.message_id) == 55
    not_a_command = parse_update(fake.build_press(-100123, 55, 43, data="hello", query_id="q-2"))
    assert not_a_command.callback_query is not None
    assert press_envelope(not_a_command.callback_query, role_hint=None, owner_id=42) is None


def test_the_toast_says_received_or_why_nothing_will_change() -> None:
    owner = Envelope(channel="telegram", text="/ratify m-1", sender="42", is_owner=True)
    member = Envelope(channel="telegram", text="/ratify m-1", sender="43")
    assert toast(owner, admitted=True, owner_only={"ratify"}).text.startswith("Received: /ratify")
    refused = toast(member, admitted=True, owner_only={"ratify"})
    assert refused.alert and "Only the board's owner" in refused.text
    assert toast(member, admitted=False, owner_only=set()).text.startswith("Sorry, only the board's members")
    assert "no longer works" in toast(None, admitted=False, owner_only=set()).text


def test_whatsapp_reply_buttons_and_a_long_text_before_them() -> None:
    content = button_message("Pick one", BUTTONS)
    assert content["interactive"]["action"]["buttons"][2] == {
        "type": "reply", "reply": {"id": "/revisit m-20261125-120000-ab12", "title": "Revisit"}}
    with pytest.raises(ValueError, match="1024"):
        button_message("x" * (MAX_BUTTON_BODY + 1), BUTTONS)
    assert with_buttons(["short"], BUTTONS) == ([], "short")
    assert with_buttons(["a", "b" * 50], BUTTONS) == (["a"], "b" * 50)
    long = split_text("word " * 400)  # one piece over 1024 characters: sent as text, the buttons after it
    assert with_buttons(long, BUTTONS) == (long, BUTTONS_BODY)
    assert with_buttons(long, ()) == (long, None)


def test_the_terminal_shows_buttons_as_the_commands_they_send_and_settled_buttons_say_the_verdict() -> None:
    assert button_line(BUTTONS[:1]) == "[Ratify: /ratify m-20261125-120000-ab12]"
    assert with_button_line("text", ()) == "text"
    record = DecisionRecord("m-1", "Topic", "Do it", Verdict.VETOED, "2026-11-25T12:00:00+00:00")
    assert settled_buttons(record) == (Button("⛔ Vetoed", "/decision m-1"),)
    assert settled_buttons(DecisionRecord("m-1", "T", "R", Verdict.PROPOSED, "")) == decision_buttons("m-1")

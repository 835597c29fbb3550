"""A reminder offers Done and Snooze once (issue 38): where the channel shows buttons (Telegram, WhatsApp inside its
24-hour window) the text does not list the commands too; where it cannot (a WhatsApp template outside the window)
the text says them. Through a real ``sabha run`` on the fake Bot API / Graph API and the offline model, its clock
a file the test writes (as in test_reminders.py)."""

from __future__ import annotations

from pathlib import Path

from aiohttp import ClientSession

from tests.board.decisions.test_reminders import Board
from tests.board.decisions.test_reminders_whatsapp import WAIT, WINDOW_CLOSED, WhatsAppBoard
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import FORUM, eventually
from tests.support.whatsapp import OWNER


async def test_on_telegram_the_buttons_are_the_only_done_and_snooze(tmp_path: Path, fake: FakeTelegramAPI) -> None:
    board = Board(tmp_path, fake)
    try:
        await board.start()
        _, second, *_ = await board.meeting()
        await board.say(f"/due {second} +5s", "is now due")
        board.at(5)
        nudge = await board.wait_for(f"owes action #{second} ")
    finally:
        await board.sabha.close()
    assert "\n\u23f0 Your reminder: Research owes action #" in nudge.text, nudge.text  # under the Chair's header
    assert "/done" not in nudge.text and "/snooze" not in nudge.text, nudge.text
    assert fake.buttons_of(FORUM, nudge.result["message_id"]) == [
        ("Done", f"/done {second}"), ("Snooze", f"/snooze {second}")]


async def test_a_whatsapp_template_has_no_buttons_so_its_text_says_how(tmp_path: Path,
                                                                       fake_graph: FakeGraphAPI) -> None:
    board = WhatsAppBoard(tmp_path, fake_graph, template=True)
    try:
        await board.sabha.start()
        async with ClientSession() as http:
            item = await board.meeting_and_due(http, "+5s")
            fake_graph.fail_next(WINDOW_CLOSED, user=OWNER)  # Meta: more than 24 h since they wrote
            board.at(5)
            await eventually(lambda: fake_graph.sent_templates, "the reminder template", WAIT)
    finally:
        await board.sabha.close()
    [line] = fake_graph.sent_templates[0].parameters
    assert f"owes action #{item} " in line, line
    assert f"/done {item}" in line and f"/snooze {item}" in line, line

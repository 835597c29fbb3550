"""Reminders on WhatsApp through the real daemon and the fake Graph API (issue 27): inside the 24-hour
window a reminder is an ordinary message; outside it (Meta refuses free-form messages with 131047)
the approved template ``whatsapp.templates.reminder`` carries it; with none configured the reminder
waits, ``sabha status`` says so, and it goes out when the user next writes. The daemon's time is a
file the test writes (``SABHA_TEST_CLOCK``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from aiohttp import ClientSession

from board.clock import FileClock
from board.workspace.paths import copy_default_workspace
from tests.support.daemon import REPO, SabhaProcess
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.schedule import START
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, OWNER, VERIFY_TOKEN, post, text_notification

WAIT = 30.0
WINDOW_CLOSED = 131047


class WhatsAppBoard:
    """A daemon with only the WhatsApp channel (offline model), the fake Graph API, the clock file."""

    def __init__(self, root: Path, graph: FakeGraphAPI, *, template: bool) -> None:
        self.root, self.graph, self.clock = root, graph, root / "clock"
        FileClock.write(self.clock, START)
        copy_default_workspace(root / "workspace")
        lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
                 "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
                 "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
                 f"  graph_base_url: {graph.base_url}", f'  allowed_numbers: ["{OWNER}"]']
        if template:
            lines += ["  templates:", "    reminder: {name: sabha_reminder, language: en_US}"]
        (root / "sabha.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.env = {"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET,
                    "SABHA_TEST_MODE": "1", "SABHA_TEST_CLOCK": str(self.clock)}
        self.sabha = SabhaProcess(root / "sabha.yaml", env=self.env)

    def at(self, seconds: float) -> None:
        FileClock.write(self.clock, START + timedelta(seconds=seconds))

    async def say(self, http: ClientSession, text: str, expect: str) -> str:
        """``text`` from the owner; the first new text to them matching ``expect``."""
        seen = len(self.graph.sent)
        status, _ = await post(http, f"http://127.0.0.1:{self.sabha.port}/whatsapp/webhook",
                               text_notification(OWNER, text))
        assert status == 200
        return await self.text(expect, after=seen)

    async def text(self, expect: str, *, after: int = 0, timeout: float = WAIT) -> str:
        regex = re.compile(expect)
        found: list[str] = []

        def seen() -> bool:
            found[:] = [s.body for s in self.graph.sent[after:] if s.user == OWNER and regex.search(s.body)]
            return bool(found)

        await eventually(seen, f"a text matching {expect!r}", timeout)
        return found[0]

    def reminders(self, item: int) -> list[str]:
        return [s.body for s in self.graph.sent if f"owes action #{item} " in s.body]

    async def meeting_and_due(self, http: ClientSession, due: str) -> int:
        """A meeting to its decision, then ``/due <second item> <due>``: that item's id."""
        await self.say(http, "/meeting Should we open a Pune office?", "Convening the board")
        await self.text("Recommendation", timeout=60)
        listed = await self.say(http, "/actions", "Open action items")
        item = [int(n) for n in re.findall(r"^#(\d+) ", listed, re.MULTILINE)][1]
        await self.say(http, f"/due {item} {due}", "is now due")
        return item

    def status(self) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
        env.update(self.env, PYTHONPATH=str(REPO))
        done = subprocess.run([sys.executable, "-m", "bot.cli.main", "status", "--config",
                               str(self.root / "sabha.yaml")], capture_output=True, text=True, timeout=60, env=env,
                              cwd=self.root)
        return done.stdout


@pytest.fixture
def graph(fake_graph: FakeGraphAPI) -> FakeGraphAPI:
    return fake_graph


async def test_inside_the_window_a_reminder_is_an_ordinary_message(tmp_path: Path, graph: FakeGraphAPI) -> None:
    board = WhatsAppBoard(tmp_path, graph, template=True)
    try:
        await board.sabha.start()
        async with ClientSession() as http:
            item = await board.meeting_and_due(http, "+5s")
            board.at(5)
            body = await board.text(f"owes action #{item} ")
            assert f"/done {item}" not in body  # its reply buttons say Done and Snooze (issue 38: not twice)
            assert graph.sent_templates == []
            await board.say(http, f"/done {item}", f"Done: #{item}")
            assert len(board.reminders(item)) == 1
    finally:
        await board.sabha.close()


async def test_outside_the_window_the_reminder_template_carries_it(tmp_path: Path, graph: FakeGraphAPI) -> None:
    board = WhatsAppBoard(tmp_path, graph, template=True)
    try:
        await board.sabha.start()
        async with ClientSession() as http:
            item = await board.meeting_and_due(http, "+5s")
            graph.fail_next(WINDOW_CLOSED, user=OWNER)  # Meta: more than 24 h since they wrote
            board.at(5)
            await eventually(lambda: graph.sent_templates, "the reminder template", WAIT)
            sent = graph.sent_templates[0]
            assert (sent.user, sent.name, sent.language) == (OWNER, "sabha_reminder", "en_US")
            assert len(sent.parameters) == 1 and f"owes action #{item} " in sent.parameters[0]
            assert "\n" not in sent.parameters[0]  # a template parameter is one line
            assert board.reminders(item) == []  # the free-form text was refused, not sent
            await board.say(http, "/actions", "Open action items")  # a marker: the runner is done with it
            assert len(graph.sent_templates) == 1
    finally:
        await board.sabha.close()


async def test_outside_the_window_without_a_template_it_waits_for_the_users_next_message(
    tmp_path: Path, graph: FakeGraphAPI
) -> None:
    board = WhatsAppBoard(tmp_path, graph, template=False)
    try:
        await board.sabha.start()
        async with ClientSession() as http:
            item = await board.meeting_and_due(http, "+5s")
            graph.fail_next(WINDOW_CLOSED, user=OWNER)
            board.at(5)
            await board.sabha.wait_for_log(f"reminder:action:{item} waits: the WhatsApp 24-hour window", WAIT)
            status = board.status()
            assert "waiting (1):" in status and "24-hour window with" in status, status
            assert "whatsapp.templates.reminder is not set: it is sent when they next write" in status
            assert board.reminders(item) == [] and graph.sent_templates == []
            await board.say(http, "hello again", "")  # the user writes: the window is open again
            body = await board.text(f"owes action #{item} ")
            assert f"/done {item}" not in body  # the buttons carry it
            await board.say(http, "/actions", "Open action items")  # a marker after it
            assert len(board.reminders(item)) == 1
            assert "  waiting (" not in board.status()  # nothing waits now
    finally:
        await board.sabha.close()
